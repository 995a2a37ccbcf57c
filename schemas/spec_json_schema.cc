// The JSON Schemas of the experiment and sweep files, written from the key tables.
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "schemas/experiment_config.h"
#include "schemas/spec_docs.h"
#include "schemas/spec_keys.h"
#include "schemas/sweep_blocks.h"

namespace nmsparse {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: larger bounds only guard a conversion.
constexpr char kSchemaDialect[] = "https://json-schema.org/draft/2020-12/schema";
constexpr char kGeneratedNote[] =
    " Generated from the key tables (schemas/spec_keys.h) by //schemas:spec_docs_writer: do not edit.";

// "^(A|B)$" matching each name in any case, as the readers do.
std::string CaseInsensitivePattern(const std::vector<std::string>& names) {
  std::vector<std::string> alternatives;
  for (const std::string& name : names) {
    std::string alternative;
    for (char c : name) {
      if (absl::ascii_isalpha(c)) {
        absl::StrAppend(&alternative, "[", std::string(1, absl::ascii_toupper(c)),
                        std::string(1, absl::ascii_tolower(c)), "]");
      } else if (std::string(".+*?()[]{}|^$\\").find(c) != std::string::npos) {
        absl::StrAppend(&alternative, "\\", std::string(1, c));
      } else {
        alternative.push_back(c);
      }
    }
    alternatives.push_back(alternative);
  }
  return "^(" + absl::StrJoin(alternatives, "|") + ")$";
}

Json TypedDefault(const KeyInfo& key) {
  switch (key.kind) {
    case KeyKind::kInteger:
      return std::strtoll(key.default_text.c_str(), nullptr, 10);
    case KeyKind::kNumber:
      return std::strtod(key.default_text.c_str(), nullptr);
    case KeyKind::kBoolean:
      return key.default_text == "true";
    default:
      return key.default_text;
  }
}

void AddRange(const KeyInfo& key, Json* out) {
  if (key.min > -kExactIntegers) {
    (*out)[key.min_open ? "exclusiveMinimum" : "minimum"] =
        key.kind == KeyKind::kInteger ? Json(static_cast<int64_t>(key.min)) : Json(key.min);
  }
  if (key.max < kExactIntegers) {
    (*out)[key.max_open ? "exclusiveMaximum" : "maximum"] =
        key.kind == KeyKind::kInteger ? Json(static_cast<int64_t>(key.max)) : Json(key.max);
  }
}

Json StringList() {
  return Json{{"oneOf",
               {{{"type", "string"}, {"minLength", 1}},
                {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}}}}};
}

Json ValueSchema(const KeyInfo& key);

// A map of `keys`; null, like an absent section, means every default.
Json SectionSchema(const std::vector<KeyInfo>& keys, const std::string& doc) {
  Json out = {{"type", {"object", "null"}}};
  if (!doc.empty()) out["description"] = doc;
  out["additionalProperties"] = false;
  Json properties = Json::object();
  std::vector<std::string> required;
  for (const KeyInfo& key : keys) {
    properties[key.name] = ValueSchema(key);
    if (key.required) required.push_back(key.name);
  }
  out["properties"] = properties;
  if (!required.empty()) out["required"] = required;
  return out;
}

Json PhasesSchema(const KeyInfo& key) {
  const KeyInfo& fraction = *FindKey(key.keys, "fraction");
  Json fraction_schema = ValueSchema(fraction);
  fraction_schema.erase("description");
  Json shorthand = {
      {"type", "object"},
      {"description", "Shorthand: {KIND: fraction}, KIND one of the kinds, case-insensitive."},
      {"minProperties", 1},
      {"maxProperties", 1},
      {"patternProperties", {{CaseInsensitivePattern(FindKey(key.keys, "kind")->names), fraction_schema}}},
      {"additionalProperties", false}};
  Json canonical = SectionSchema(key.keys, "Canonical form.");
  canonical["type"] = "object";
  canonical["required"] = {"kind", "fraction"};
  return {{"type", {"array", "null"}}, {"items", {{"oneOf", {shorthand, canonical}}}}};
}

Json ValueSchema(const KeyInfo& key) {
  Json out = Json::object();
  switch (key.kind) {
    case KeyKind::kInteger:
    case KeyKind::kNumber:
      out["type"] = key.kind == KeyKind::kInteger ? "integer" : "number";
      AddRange(key, &out);
      break;
    case KeyKind::kBoolean:
      out["type"] = "boolean";
      break;
    case KeyKind::kString:
      out["type"] = "string";
      if (!key.names.empty()) out["enum"] = key.names;
      break;
    case KeyKind::kEnum:
      out["type"] = "string";
      out["pattern"] = CaseInsensitivePattern(key.names);
      break;
    case KeyKind::kSection:
      out = SectionSchema(key.keys, "");
      break;
    case KeyKind::kSectionList:
      out = {{"type", {"array", "null"}}, {"items", {{"$ref", "#/$defs/dynamic_group"}}}};
      break;
    case KeyKind::kGlobs:
      out = StringList();
      break;
    case KeyKind::kIntegers:
      out = {{"oneOf",
              {{{"type", "integer"}, {"minimum", 1}},
               {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 1}}}, {"minItems", 1}}}}};
      break;
    case KeyKind::kIntegerList:
      out = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", key.min}}}};
      break;
    case KeyKind::kNumberList:
      out = {{"type", "array"}, {"items", {{"type", "number"}}}};
      break;
    case KeyKind::kSchedule:
      out["$ref"] = "#/$defs/schedule";
      break;
    case KeyKind::kScheduleList:
      out = {{"type", "array"}, {"items", {{"$ref", "#/$defs/schedule"}}}};
      break;
    case KeyKind::kLocations: {
      std::string letters;
      for (const std::string& name : key.names) {
        for (char c : name) {
          if (letters.find(c) == std::string::npos)
            absl::StrAppend(&letters, std::string(1, c), std::string(1, absl::ascii_tolower(c)));
        }
      }
      out["oneOf"] = {{{"type", "string"}, {"pattern", "^([" + letters + "]|[,+|/ \\t])+$"}},
                      {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}};
      break;
    }
    case KeyKind::kPhases:
      out = PhasesSchema(key);
      break;
  }
  if (!key.default_text.empty()) out["default"] = TypedDefault(key);
  if (!key.doc.empty()) out["description"] = key.doc;
  return out;
}

// The sparsity section's three shapes: N:M keys, one dynamic group inline, or a list of groups.
Json SparsityShapes(const KeyInfo& sparsity) {
  Json inline_group =
      SectionSchema(FindKey(sparsity.keys, "dynamic")->keys, "One dynamic group written inline.");
  inline_group["type"] = "object";
  inline_group["properties"]["sparsity_type"] = {{"type", "string"},
                                                 {"pattern", CaseInsensitivePattern({"UNSTRUCTURED"})}};
  return {{"description", sparsity.doc},
          {"oneOf",
           {{{"$ref", "#/$defs/sparsity"}},
            inline_group,
            {{"type", "array"},
             {"items", {{"$ref", "#/$defs/dynamic_group"}}},
             {"description",
              "A list of dynamic groups; the first whose filter matches a parameter takes it."}}}}};
}

// Every key path an override may name: name, seed, SECTION.KEY.
std::string KeyPathPattern() {
  std::vector<std::string> paths;
  for (const KeyInfo& key : ExperimentKeys().Infos()) {
    if (key.keys.empty()) {
      paths.push_back(key.name);
    } else {
      std::vector<std::string> names;
      for (const KeyInfo& sub : key.keys) names.push_back(sub.name);
      paths.push_back(key.name + "\\.(" + absl::StrJoin(names, "|") + ")");
    }
  }
  return "^(" + absl::StrJoin(paths, "|") + ")$";
}

// The flat reference form: its keys are train.py's; the aliases say where the mapped ones go.
Json FlatForm() {
  std::vector<std::string> mapped;
  for (const KeyInfo& key : ExperimentKeys().Infos()) {
    if (!key.alias.empty()) mapped.push_back(key.alias + " -> " + key.name);
    for (const KeyInfo& sub : key.keys) {
      if (!sub.alias.empty()) mapped.push_back(sub.alias + " -> " + key.name + "." + sub.name);
    }
  }
  return {
      {"type", "object"},
      {"description",
       "Flat form: a timm train.py config as the paper's reference code writes it (top-level model is a "
       "string). Keys nmsparse implements are mapped (" +
           absl::StrJoin(mapped, ", ") +
           ", and the sparsity keys by their own names); other train.py keys are accepted and reported as "
           "ignored when set to a non-default value; any other key is an error."},
      {"required", {"model"}},
      {"properties", {{"model", {{"type", "string"}}}}},
      {"additionalProperties", true}};
}

std::string Pretty(const Json& json) { return json.dump(2, ' ', /*ensure_ascii=*/true) + "\n"; }

}  // namespace

std::string ExperimentJsonSchema() {
  const std::vector<KeyInfo> keys = ExperimentKeys().Infos();
  Json nested = {{"type", "object"},
                 {"description", "Nested form: the sections of the key tables (schemas/spec_keys.h)."},
                 {"additionalProperties", false}};
  Json properties = Json::object();
  for (const KeyInfo& key : keys) {
    properties[key.name] = key.name == "sparsity" ? SparsityShapes(key) : ValueSchema(key);
  }
  nested["properties"] = properties;
  const KeyInfo& sparsity = *FindKey(keys, "sparsity");
  const KeyInfo& dynamic = *FindKey(sparsity.keys, "dynamic");
  const KeyInfo& schedule = *FindKey(dynamic.keys, "sparsity");
  Json schedule_map = SectionSchema(schedule.keys, "");
  schedule_map["type"] = "object";
  Json group = SectionSchema(dynamic.keys,
                             "One group of dynamic unstructured sparsity (§7), v1.DynamicSparsityGroup.");
  group["type"] = "object";
  Json schema = {
      {"$schema", kSchemaDialect},
      {"$id", "https://nmsparse.dev/schemas/experiment.schema.json"},
      {"title", "nmsparse experiment spec"},
      {"description",
       std::string(
           "One training run (YAML). Parsed and validated by //schemas:experiment_config; the canonical "
           "YAML (every key, defaults filled) is what nmtrain receives and what the content hash "
           "covers.") +
           kGeneratedNote},
      {"oneOf", {nested, FlatForm()}},
      {"$defs",
       {{"sparsity", SectionSchema(sparsity.keys, sparsity.doc)},
        {"schedule",
         {{"description",
           "A step-aware hyperparameter (§7, schemas/step_schedule.h), clamped to [0, 1]: a number "
           "(constant) or "
           "{type, ...}. Keys that do not apply to the type must be 0 or absent."},
          {"oneOf",
           {{{"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"description", "Constant."}},
            schedule_map}}}},
        {"dynamic_group", group}}}};
  return Pretty(schema);
}

std::string SweepJsonSchema() {
  const Json key_path = {{"type", "string"},
                         {"description", "A key path of the nested spec: name, seed or section.key."},
                         {"pattern", KeyPathPattern()}};
  const Json overrides = {{"type", "object"},
                          {"description", "Overrides: key path -> YAML value."},
                          {"minProperties", 1},
                          {"propertyNames", key_path}};
  const Json grid_axis = {
      {"oneOf",
       {{{"type", "array"}, {"minItems", 1}, {"description", "Values of the key path named by the axis."}},
        {{"type", "object"},
         {"required", {"values"}},
         {"additionalProperties", false},
         {"properties",
          {{"values",
            {{"type", "array"},
             {"minItems", 1},
             {"items",
              {{"oneOf",
                {{{"type", "object"},
                  {"required", {"label", "set"}},
                  {"additionalProperties", false},
                  {"properties", {{"label", {{"type", "string"}}}, {"set", overrides}}}},
                 {{"type", "object"},
                  {"minProperties", 1},
                  {"maxProperties", 1},
                  {"additionalProperties", overrides}}}}}}}}}}},
        {{"type", "object"},
         {"minProperties", 1},
         {"description", "label -> overrides."},
         {"additionalProperties", overrides}}}}};
  const Json random_axis = {
      {"oneOf",
       {{{"type", "object"},
         {"required", {"min", "max"}},
         {"additionalProperties", false},
         {"properties",
          {{"min", {{"type", "number"}}},
           {"max", {{"type", "number"}}},
           {"log", {{"type", "boolean"}, {"description", "Log-uniform (min > 0)."}}},
           {"integer", {{"type", "boolean"}, {"description", "Integers, both bounds inclusive."}}}}}},
        {{"type", "object"},
         {"required", {"choices"}},
         {"additionalProperties", false},
         {"properties", {{"choices", {{"type", "array"}, {"minItems", 1}}}}}}}}};
  Json properties = Json::object();
  for (const KeyInfo& key : SweepKeyTable().Infos()) {
    Json value;
    if (key.name == "base") {
      value = {{"$ref", "experiment.schema.json"}};
    } else if (key.name == "base_file") {
      value = {{"type", "string"}};
    } else if (key.name == "grid") {
      value = {{"type", "object"}, {"additionalProperties", grid_axis}};
    } else if (key.name == "random") {
      value = {{"type", "object"}, {"propertyNames", key_path}, {"additionalProperties", random_axis}};
    } else if (key.kind == KeyKind::kSection) {
      value = SectionSchema(key.keys, "");
      value["type"] = "object";
    } else {
      value = ValueSchema(key);
    }
    if (!key.doc.empty()) value["description"] = key.doc;
    properties[key.name] = value;
  }
  Json schema = {
      {"$schema", kSchemaDialect},
      {"$id", "https://nmsparse.dev/schemas/sweep.schema.json"},
      {"title", "nmsparse sweep"},
      {"description",
       std::string("A base experiment spec and axes (YAML). Parsed by //schemas:sweep into a v1.SweepSpec "
                   "and expanded by the coordinator: grid axes multiply (first axis slowest); random axes "
                   "draw num_samples points per grid point from a std::mt19937_64 seeded with seed.") +
           kGeneratedNote},
      {"type", "object"},
      {"additionalProperties", false},
      {"properties", properties}};
  return Pretty(schema);
}

}  // namespace nmsparse
