// The docs' key tables, written from the key tables, and the files the generated texts go to.
#include "schemas/spec_docs.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "schemas/experiment_config.h"
#include "schemas/reference_key_table.h"
#include "schemas/spec_keys.h"
#include "schemas/sweep_blocks.h"

namespace nmsparse {
namespace {

constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: larger bounds only guard a conversion.

std::string Cell(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}}); }

std::string Code(const std::string& text) { return "`" + text + "`"; }

std::string CodeList(const std::vector<std::string>& names) {
  std::vector<std::string> codes;
  for (const std::string& name : names) codes.push_back(Code(name));
  return absl::StrJoin(codes, ", ");
}

std::string RangeText(const KeyInfo& key) {
  const auto number = [&](double v) {
    return key.kind == KeyKind::kInteger ? absl::StrCat(static_cast<int64_t>(v)) : absl::StrCat(v);
  };
  const bool has_min = key.min > -kExactIntegers, has_max = key.max < std::numeric_limits<int32_t>::max();
  if (has_min && has_max) {
    return absl::StrCat(key.min_open ? "(" : "[", number(key.min), ", ", number(key.max),
                        key.max_open ? ")" : "]");
  }
  if (has_min) return absl::StrCat(key.min_open ? "> " : "≥ ", number(key.min));
  if (has_max) return absl::StrCat(key.max_open ? "< " : "≤ ", number(key.max));
  return "";
}

std::string ValuesText(const KeyInfo& key) {
  switch (key.kind) {
    case KeyKind::kInteger:
      return "integer " + RangeText(key);
    case KeyKind::kNumber:
      return "number " + RangeText(key);
    case KeyKind::kBoolean:
      return "boolean";
    case KeyKind::kString:
      return key.names.empty() ? "string" : CodeList(key.names);
    case KeyKind::kEnum:
      return CodeList(key.names);
    case KeyKind::kSection: {
      std::vector<std::string> names;
      for (const KeyInfo& sub : key.keys) names.push_back(sub.name);
      return Code("{" + absl::StrJoin(names, ", ") + "}");
    }
    case KeyKind::kSectionList:
      return "a list of groups";
    case KeyKind::kGlobs:
      return "a glob or a list of globs";
    case KeyKind::kIntegers:
      return "a positive integer or a list of them";
    case KeyKind::kIntegerList:
      return "a list of integers";
    case KeyKind::kNumberList:
      return key.names.empty() ? "a list of numbers"
                               : "a list of " + absl::StrJoin(key.names, " or ") + " numbers";
    case KeyKind::kSchedule:
      return "a number in [0, 1] or a schedule";
    case KeyKind::kScheduleList:
      return "a list of schedules";
    case KeyKind::kLocations:
      return "a set over " + CodeList(key.names);
    case KeyKind::kPhases:
      return "a list of " + Code("{dense|sparse|fine_tune: fraction}");
  }
  return "";
}

std::string DefaultText(const KeyInfo& key) {
  if (key.required) return "(required)";
  if (key.input_only || key.no_default) return "";
  if (key.kind == KeyKind::kGlobs || key.kind == KeyKind::kPhases || key.kind == KeyKind::kSectionList) {
    return "empty";
  }
  if (key.default_text.empty()) return key.kind == KeyKind::kString ? Code("\"\"") : "";
  return key.kind == KeyKind::kString || key.kind == KeyKind::kEnum ? Code(key.default_text)
                                                                    : key.default_text;
}

struct Column {
  std::string title;
  std::string (*text)(const std::string& path, const KeyInfo& key);
};

std::string Table(const std::vector<Column>& columns,
                  const std::vector<std::pair<std::string, KeyInfo>>& rows) {
  std::vector<std::string> titles, rules;
  for (const Column& c : columns) {
    titles.push_back(c.title);
    rules.push_back("---");
  }
  std::string out = "| " + absl::StrJoin(titles, " | ") + " |\n| " + absl::StrJoin(rules, " | ") + " |\n";
  for (const auto& [path, key] : rows) {
    std::vector<std::string> cells;
    for (const Column& c : columns) cells.push_back(Cell(c.text(path, key)));
    absl::StrAppend(&out, "| ", absl::StrJoin(cells, " | "), " |\n");
  }
  return out;
}

const Column kKey = {"key", [](const std::string& path, const KeyInfo&) { return Code(path); }};
const Column kValues = {"values", [](const std::string&, const KeyInfo& key) { return ValuesText(key); }};
const Column kDefault = {"default", [](const std::string&, const KeyInfo& key) { return DefaultText(key); }};
const Column kMeaning = {"meaning", [](const std::string&, const KeyInfo& key) { return key.doc; }};
const Column kChecked = {"checked with other keys", [](const std::string&, const KeyInfo& key) {
                           return std::string(key.validated ? "yes" : "");
                         }};
const Column kAlias = {"reference key", [](const std::string&, const KeyInfo& key) {
                         return key.alias.empty() ? "" : Code(key.alias);
                       }};

std::vector<std::pair<std::string, KeyInfo>> Rows(const std::vector<KeyInfo>& keys,
                                                  const std::string& prefix) {
  std::vector<std::pair<std::string, KeyInfo>> rows;
  for (const KeyInfo& key : keys) rows.emplace_back(prefix + key.name, key);
  return rows;
}

// name, seed and the sections other than sparsity (which has a table of its own), one row per key path.
std::vector<std::pair<std::string, KeyInfo>> ExperimentRows() {
  std::vector<std::pair<std::string, KeyInfo>> rows;
  for (const KeyInfo& key : ExperimentKeys().Infos()) {
    if (key.name == "sparsity") continue;
    if (key.keys.empty()) rows.emplace_back(key.name, key);
    for (const KeyInfo& sub : key.keys) rows.emplace_back(key.name + "." + sub.name, sub);
  }
  return rows;
}

constexpr char kBeginMarker[] = "<!-- key table: ";
constexpr char kEndMarker[] = "<!-- end of key table -->";

}  // namespace

std::string KeyTableMarkdown(const std::string& name) {
  if (name == "experiment")
    return Table({kKey, kValues, kDefault, kAlias, kChecked, kMeaning}, ExperimentRows());
  const std::vector<KeyInfo> experiment = ExperimentKeys().Infos();
  const KeyInfo& sparsity = *FindKey(experiment, "sparsity");
  if (name == "sparsity")
    return Table({kKey, kValues, kDefault, kChecked, kMeaning}, Rows(sparsity.keys, ""));
  if (name == "dynamic_group") {
    return Table({kKey, kValues, kDefault, kMeaning}, Rows(FindKey(sparsity.keys, "dynamic")->keys, ""));
  }
  if (name == "early_stopping") {
    return Table({kKey, kValues, kDefault, kMeaning}, Rows(EarlyStoppingKeyTable().Infos(), ""));
  }
  if (name == "search") return Table({kKey, kValues, kDefault, kMeaning}, Rows(SearchKeyTable().Infos(), ""));
  if (name == "reference_keys") return UnmappedReferenceKeysMarkdown();
  return "";
}

absl::StatusOr<std::string> WithKeyTables(const std::string& doc) {
  std::string out;
  size_t at = 0;
  for (size_t begin; (begin = doc.find(kBeginMarker, at)) != std::string::npos;) {
    const size_t name_at = begin + sizeof(kBeginMarker) - 1;
    const size_t line_end = doc.find('\n', begin);
    const size_t end = doc.find(kEndMarker, begin);
    if (line_end == std::string::npos || end == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("key table marker at byte ", begin, " has no '", kEndMarker, "'"));
    }
    const std::string name = doc.substr(name_at, doc.find_first_of(" \n", name_at) - name_at);
    const std::string table = KeyTableMarkdown(name);
    if (table.empty()) return absl::InvalidArgumentError("unknown key table '" + name + "'");
    absl::StrAppend(&out, doc.substr(at, line_end + 1 - at), table);
    at = end;
  }
  return out + doc.substr(at);
}

const std::vector<GeneratedFile>& GeneratedFiles() {
  static const auto* files = new std::vector<GeneratedFile>{
      {"schemas/experiment.schema.json", true},
      {"schemas/sweep.schema.json", true},
      {"schemas/README.md", false},
      {"docs/sparsity-method.md", false},
      {"docs/sweeps.md", false},
      {"docs/nmtrain.md", false},
  };
  return *files;
}

absl::StatusOr<std::string> GeneratedText(const std::string& path, const std::string& current) {
  if (path == "schemas/experiment.schema.json") return ExperimentJsonSchema();
  if (path == "schemas/sweep.schema.json") return SweepJsonSchema();
  return WithKeyTables(current);
}

}  // namespace nmsparse
