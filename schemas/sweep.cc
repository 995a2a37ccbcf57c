#include "schemas/sweep.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "schemas/base_spec.h"
#include "schemas/did_you_mean.h"
#include "schemas/recipe.h"
#include "schemas/reference_config.h"
#include "schemas/request_bounds.h"
#include "schemas/sparsity_config.h"
#include "schemas/spec_text.h"
#include "schemas/sweep_blocks.h"
#include "schemas/trained_epochs.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

// The YAML text of an override value: a scalar's own text, a collection in flow form, "" for null.
std::string ValueText(const YAML::Node& node) {
  if (yaml_util::IsNullish(node)) return "";
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// The node an override value text stands for. Plain scalars stay strings without a source position (their
// errors name the key path, not a line of a text that is not a file); collections are parsed.
absl::StatusOr<YAML::Node> ValueNode(const std::string& text, const std::string& key_path) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (text.empty() || lower == "~" || lower == "null") return YAML::Node(YAML::NodeType::Null);
  if (text.front() == '[' || text.front() == '{') {
    auto node = yaml_util::LoadYaml(text, "");
    if (!node.ok()) return absl::InvalidArgumentError(absl::StrCat(key_path, ": ", node.status().message()));
    return *node;
  }
  return YAML::Node(text);
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

absl::Status CheckPathAt(const YAML::Node& at, const std::string& key_path, const std::string& error_path) {
  absl::Status st = CheckKeyPath(key_path);
  if (st.ok()) return st;
  return Error(at, error_path, std::string(st.message()));
}

absl::StatusOr<v1::AxisValue> LabelledValue(const std::string& label, const YAML::Node& label_node,
                                            const YAML::Node& set, const std::string& path) {
  if (!set.IsMap() || set.size() == 0) {
    return Error(set.IsDefined() ? set : label_node, path,
                 "value " + yaml_util::Describe(set) + " is not a map of key.path: value overrides");
  }
  v1::AxisValue value;
  value.set_label(label);
  for (const auto& kv : set) {
    const std::string key = kv.first.as<std::string>();
    if (auto st = CheckPathAt(kv.first, key, path + "." + key); !st.ok()) return st;
    (*value.mutable_set())[key] = ValueText(kv.second);
  }
  return value;
}

// One grid axis: a list of values for a key path, a map label -> overrides, or {values: [...]}.
absl::StatusOr<v1::GridAxis> ParseAxis(const std::string& name, const YAML::Node& name_node,
                                       const YAML::Node& node, const std::string& path) {
  v1::GridAxis axis;
  axis.set_name(name);
  if (node.IsSequence()) {
    if (auto st = CheckPathAt(name_node, name, path); !st.ok()) return st;
    for (const auto& element : node) {
      v1::AxisValue* value = axis.add_values();
      value->set_label(ValueText(element));
      (*value->mutable_set())[name] = ValueText(element);
    }
  } else if (node.IsMap() && node.size() == 1 && node["values"] && node["values"].IsSequence()) {
    const YAML::Node values = node["values"];
    for (size_t i = 0; i < values.size(); ++i) {
      const YAML::Node entry = values[i];
      const std::string entry_path = absl::StrCat(path, ".values[", i, "]");
      absl::StatusOr<v1::AxisValue> value;
      if (entry.IsMap() && entry["label"]) {
        if (auto st = yaml_util::CheckKeys(entry, entry_path + ".", {"label", "set"}); !st.ok()) return st;
        auto label = yaml_util::ReadString(entry["label"], entry_path + ".label");
        if (!label.ok()) return label.status();
        value = LabelledValue(*label, entry["label"], entry["set"], entry_path + ".set");
      } else if (entry.IsMap() && entry.size() == 1) {
        const std::string label = entry.begin()->first.as<std::string>();
        value = LabelledValue(label, entry.begin()->first, entry.begin()->second, entry_path + "." + label);
      } else {
        return Error(entry, entry_path,
                     "value " + yaml_util::Describe(entry) + " is not {label: L, set: {...}} or {L: {...}}");
      }
      if (!value.ok()) return value.status();
      *axis.add_values() = *value;
    }
  } else if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string label = kv.first.as<std::string>();
      auto value = LabelledValue(label, kv.first, kv.second, path + "." + label);
      if (!value.ok()) return value.status();
      *axis.add_values() = *value;
    }
  } else {
    return Error(node, path,
                 "value " + yaml_util::Describe(node) +
                     " is not a list of values, a map label -> overrides, or {values: [...]}");
  }
  if (axis.values_size() == 0) return Error(node, path, "an axis needs at least one value");
  std::set<std::string> labels;
  for (const auto& v : axis.values()) {
    if (!labels.insert(v.label()).second) return Error(node, path, "duplicate label '" + v.label() + "'");
  }
  return axis;
}

absl::StatusOr<v1::RandomAxis> ParseRandomAxis(const std::string& key, const YAML::Node& key_node,
                                               const YAML::Node& node, const std::string& path) {
  if (auto st = CheckPathAt(key_node, key, path); !st.ok()) return st;
  if (!node.IsMap()) {
    return Error(
        node, path,
        "value " + yaml_util::Describe(node) + " is not {min, max, log, integer} or {choices: [...]}");
  }
  v1::RandomAxis axis;
  axis.set_key(key);
  if (node["choices"]) {
    if (auto st = yaml_util::CheckKeys(node, path + ".", {"choices"}); !st.ok()) return st;
    const YAML::Node choices = node["choices"];
    if (!choices.IsSequence() || choices.size() == 0) {
      return Error(choices, path + ".choices",
                   "value " + yaml_util::Describe(choices) + " is not a non-empty list");
    }
    for (const auto& c : choices) axis.add_choices(ValueText(c));
    return axis;
  }
  if (auto st = yaml_util::CheckKeys(node, path + ".", {"min", "max", "log", "integer"}); !st.ok()) return st;
  for (const char* bound : {"min", "max"}) {
    if (!node[bound]) return Error(node, path + "." + bound, "missing: a range needs min and max");
  }
  auto min = yaml_util::ReadDouble(node["min"], path + ".min");
  if (!min.ok()) return min.status();
  auto max = yaml_util::ReadDouble(node["max"], path + ".max");
  if (!max.ok()) return max.status();
  axis.set_min(*min);
  axis.set_max(*max);
  for (const char* flag : {"log", "integer"}) {
    if (!node[flag]) continue;
    auto value = yaml_util::ReadBool(node[flag], path + "." + flag);
    if (!value.ok()) return value.status();
    if (std::string(flag) == "log") {
      axis.set_log(*value);
    } else {
      axis.set_integer(*value);
    }
  }
  // nmserver's check of a wire sweep's axes, here with the line of the key it names.
  if (absl::Status st = CheckRandomAxis(axis); !st.ok()) {
    const YAML::Node at = absl::StartsWith(st.message(), path + ".min:") ? node["min"] : node["max"];
    const int line = yaml_util::Line(at);
    return line == 0 ? st : absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", st.message()));
  }
  return axis;
}

// Reads the base spec (inline or from base_file) into its wire form (BaseSpecYaml), and the epochs it trains.
absl::Status ParseBase(const YAML::Node& node, const std::string& file_name, v1::SweepSpec* sweep,
                       uint32_t* base_epochs, std::vector<std::string>* warnings) {
  const YAML::Node base = node["base"];
  const YAML::Node base_file = node["base_file"];
  if (base && base_file) return Error(base_file, "base_file", "give either base or base_file, not both");
  if (!base && !base_file)
    return Error(node, "base", "missing: a sweep needs a base spec (base or base_file)");
  absl::StatusOr<ExperimentConfig> config;
  if (base) {
    config = ParseExperimentNode(base, "", warnings);  // The caller adds the file name.
  } else {
    auto path = yaml_util::ReadString(base_file, "base_file");
    if (!path.ok()) return path.status();
    const std::string resolved =
        (!path->empty() && path->front() == '/') ? *path : Dirname(file_name) + *path;
    config = LoadExperimentFile(resolved, warnings);
    if (!config.ok() && config.status().code() == absl::StatusCode::kNotFound) {
      return Error(base_file, "base_file", std::string(config.status().message()));
    }
  }
  if (!config.ok()) return config.status();
  sweep->set_base(BaseSpecYaml(*config));
  *base_epochs = static_cast<uint32_t>(TrainedEpochs(config->schedule));
  return absl::OkStatus();
}

absl::Status ParseSweepNode(const YAML::Node& node, const std::string& file_name, v1::SweepSpec* sweep,
                            std::vector<std::string>* warnings) {
  if (!node.IsMap()) return Error(node, "(top level)", "expected a map of sweep keys");
  if (auto st = yaml_util::CheckKeys(node, "", SweepKeys()); !st.ok()) return st;
  uint32_t base_epochs = 0;
  if (auto st = ParseBase(node, file_name, sweep, &base_epochs, warnings); !st.ok()) return st;
  if (const YAML::Node grid = node["grid"]; !yaml_util::IsNullish(grid)) {
    if (!grid.IsMap())
      return Error(grid, "grid", "value " + yaml_util::Describe(grid) + " is not a map of axes");
    for (const auto& kv : grid) {
      const std::string name = kv.first.as<std::string>();
      auto axis = ParseAxis(name, kv.first, kv.second, "grid." + name);
      if (!axis.ok()) return axis.status();
      *sweep->add_grid() = *axis;
    }
  }
  if (const YAML::Node random = node["random"]; !yaml_util::IsNullish(random)) {
    if (!random.IsMap()) {
      return Error(random, "random",
                   "value " + yaml_util::Describe(random) + " is not a map key.path -> range");
    }
    for (const auto& kv : random) {
      const std::string key = kv.first.as<std::string>();
      auto axis = ParseRandomAxis(key, kv.first, kv.second, "random." + key);
      if (!axis.ok()) return axis.status();
      *sweep->add_random() = *axis;
    }
  }
  if (const YAML::Node es = node["early_stopping"]; !yaml_util::IsNullish(es)) {
    if (auto st = ParseEarlyStopping(es, base_epochs, sweep->mutable_early_stopping()); !st.ok()) return st;
  }
  if (auto st = ReadSweepScalars(node, sweep); !st.ok()) return st;
  if (const YAML::Node search = node["search"]; !yaml_util::IsNullish(search)) {
    return ParseSearch(search, sweep);  // Last: it checks the axes and num_samples too.
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckKeyPath(const std::string& key_path) {
  const std::vector<std::string> parts = absl::StrSplit(key_path, '.');
  const auto& top = ExperimentSectionKeys("");
  auto known = [](const std::vector<std::string>& keys, const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  if (!known(top, parts[0])) {
    return absl::InvalidArgumentError(absl::StrCat("unknown key path '", key_path, "'",
                                                   DidYouMean(parts[0], top),
                                                   ": known top-level keys: ", absl::StrJoin(top, ", ")));
  }
  const auto& section = ExperimentSectionKeys(parts[0]);
  if (section.empty()) {  // name, seed: scalars.
    if (parts.size() == 1) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("unknown key path '", key_path, "': ", parts[0], " has no keys"));
  }
  // A sparsity map holding a dynamic group's keys (recipe: SRIGL, sparsity: 0.9) is that group inline.
  const bool inline_group =
      parts.size() == 2 && parts[0] == "sparsity" && DynamicGroupKeys().Find(parts[1]) != nullptr;
  if (parts.size() != 2 || !(known(section, parts[1]) || inline_group)) {
    const std::string hint = parts.size() == 2 ? DidYouMean(parts[1], section) : "";
    return absl::InvalidArgumentError(absl::StrCat("unknown key path '", key_path, "'", hint,
                                                   ": known keys of ", parts[0], ": ",
                                                   absl::StrJoin(section, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ApplyOverride(YAML::Node& spec, const std::string& key_path, const std::string& value_text) {
  auto value = ValueNode(value_text, key_path);
  if (!value.ok()) return value.status();
  if (IsFlatReferenceConfig(spec)) {
    if (!IsReferenceKey(key_path) && !IsSparsityKey(key_path)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key path '", key_path,
                       "': a flat reference config takes timm train.py keys and "
                       "sparsity keys"));
    }
    if (key_path == kRecipeKey) {
      OverrideRecipe(spec, *value);
    } else {
      spec[key_path] = *value;
    }
    return absl::OkStatus();
  }
  if (auto st = CheckKeyPath(key_path); !st.ok()) return st;
  const size_t dot = key_path.find('.');
  if (dot == std::string::npos) {
    spec[key_path] = *value;
    return absl::OkStatus();
  }
  const std::string section = key_path.substr(0, dot);
  if (!spec[section] || !spec[section].IsMap()) spec[section] = YAML::Node(YAML::NodeType::Map);
  YAML::Node map = spec[section];
  if (section == "sparsity" && key_path.substr(dot + 1) == kRecipeKey) {
    OverrideRecipe(map, *value);  // The recipe replaces the keys it implies, as an axis means.
  } else {
    map[key_path.substr(dot + 1)] = *value;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SweepSpec> ParseSweepYaml(const std::string& text, const std::string& file_name,
                                             std::vector<std::string>* warnings) {
  auto node = yaml_util::LoadYaml(text, file_name);
  if (!node.ok()) return node.status();
  v1::SweepSpec sweep;
  if (auto st = ParseSweepNode(*node, file_name, &sweep, warnings); !st.ok()) {
    return yaml_util::WithFile(st, file_name);
  }
  // nmserver's per-field bounds, so that validate refuses what submit would.
  if (auto st = CheckRequestBounds(sweep); !st.ok()) return yaml_util::WithFile(st, file_name);
  return sweep;
}

absl::StatusOr<v1::SweepSpec> ParseSweepFile(const std::string& path, std::vector<std::string>* warnings) {
  auto text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  return ParseSweepYaml(*text, path, warnings);
}

}  // namespace nmsparse
