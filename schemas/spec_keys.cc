#include "schemas/spec_keys.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/did_you_mean.h"
#include "schemas/limits.h"

namespace nmsparse {

std::string ScalarText(const SpecScalar& value) {
  struct Text {
    std::string operator()(int64_t v) const { return absl::StrCat(v); }
    std::string operator()(double v) const { return yaml_util::FormatDouble(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(absl::string_view v) const { return std::string(v); }
  };
  return std::visit(Text(), value);
}

void NodeWriter::Scalar(const KeyInfo& key, const SpecScalar& value) {
  stack_.back()[key.name] = ScalarText(value);
}

void NodeWriter::Collection(const KeyInfo& key, const YAML::Node& value) { stack_.back()[key.name] = value; }

void NodeWriter::EmptyList(const KeyInfo& key) {
  YAML::Node list(YAML::NodeType::Sequence);
  list.SetStyle(YAML::EmitterStyle::Flow);
  stack_.back()[key.name] = list;
}

void NodeWriter::BeginSection(const KeyInfo& key) {
  YAML::Node section(YAML::NodeType::Map);
  if (key.flow) section.SetStyle(YAML::EmitterStyle::Flow);
  stack_.push_back(section);
  keys_.push_back(key.name);
}

void NodeWriter::EndSection() {
  const YAML::Node section = stack_.back();
  stack_.pop_back();
  stack_.back()[keys_.back()] = section;
  keys_.pop_back();
}

std::string DefaultText(const std::string& key, const std::function<void(SpecWriter*)>& write) {
  NodeWriter node;
  write(&node);
  const YAML::Node root = node.root();
  const YAML::Node value = root[key];
  return value && value.IsScalar() ? value.Scalar() : "";
}

absl::StatusOr<double> ReadNumberIn(const YAML::Node& value, const std::string& path, double min, double max,
                                    bool min_open, bool max_open) {
  auto r = yaml_util::ReadDouble(value, path, min, max, max_open);
  if (!r.ok() || !min_open || *r > min) return r;
  return yaml_util::Error(
      value, path,
      absl::StrCat("value ", value.Scalar(), " is out of range: must be in (", yaml_util::FormatDouble(min),
                   ", ", yaml_util::FormatDouble(max), max_open ? ")" : "]"));
}

absl::StatusOr<std::string> ReadSpecString(const YAML::Node& value, const std::string& path) {
  absl::StatusOr<std::string> text = yaml_util::ReadString(value, path);
  if (text.ok() && static_cast<int64_t>(text->size()) > limits::kMaxSpecStringBytes) {
    return yaml_util::Error(value, path,
                            absl::StrCat(limits::FormatCount(static_cast<int64_t>(text->size())),
                                         " bytes, more than the limit of ",
                                         limits::FormatCount(limits::kMaxSpecStringBytes), " bytes"));
  }
  return text;
}

absl::StatusOr<std::vector<std::string>> ReadStringOrList(const YAML::Node& value, const std::string& path) {
  std::vector<std::string> out;
  if (!value.IsSequence()) {
    auto one = ReadSpecString(value, path);
    if (!one.ok()) return one.status();
    out.push_back(*one);
    return out;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    auto one = ReadSpecString(value[i], absl::StrCat(path, "[", i, "]"));
    if (!one.ok()) return one.status();
    out.push_back(*one);
  }
  return out;
}

std::function<absl::StatusOr<std::string>(const YAML::Node&, const std::string&)> WordReader(
    const std::vector<std::string>& words) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const std::string& w : words) names.emplace_back(w, w);
  return
      [names](const YAML::Node& v, const std::string& path) { return yaml_util::ReadEnum(v, path, names); };
}

std::function<absl::StatusOr<double>(const YAML::Node&, const std::string&)> NumberReader(double min,
                                                                                          double max,
                                                                                          bool min_open,
                                                                                          bool max_open) {
  return [=](const YAML::Node& v, const std::string& path) {
    return ReadNumberIn(v, path, min, max, min_open, max_open);
  };
}

void SetRange(KeyInfo* info, double min, double max, bool min_open, bool max_open) {
  info->min = min;
  info->max = max;
  info->min_open = min_open;
  info->max_open = max_open;
}

YAML::Node StringList(const std::vector<std::string>& items, bool flow) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& item : items) list.push_back(item);
  if (flow) list.SetStyle(YAML::EmitterStyle::Flow);
  return list;
}

void WriteList(size_t size, const std::function<YAML::Node()>& build, const KeyInfo& self, SpecWriter* out) {
  if (size == 0) return out->EmptyList(self);
  out->Collection(self, build());
}

const KeyInfo* FindKey(const std::vector<KeyInfo>& keys, const std::string& name) {
  for (const KeyInfo& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

YAML::Node ReadNode(const KeyNodes& read, absl::string_view key) {
  for (const auto& [name, node] : read) {
    if (name == key) return node;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

absl::Status NotAMapError(const YAML::Node& node, const std::string& path) {
  return yaml_util::Error(node, path.empty() ? "(top level)" : path,
                          "value " + yaml_util::Describe(node) + " is not a map");
}

absl::Status UnknownKeyError(const YAML::Node& key_node, const std::string& path,
                             const std::vector<std::string>& known) {
  const std::string key = key_node.IsScalar() ? key_node.Scalar() : "";
  return yaml_util::Error(
      key_node, path, "unknown key" + DidYouMean(key, known) + "; known keys: " + absl::StrJoin(known, ", "));
}

}  // namespace nmsparse
