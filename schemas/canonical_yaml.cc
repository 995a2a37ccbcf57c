// CanonicalYaml: the experiment's key table written as the text yaml-cpp's emitter writes for
// ExperimentConfigToYaml (block maps indented by two spaces, plain scalars, flow lists as they are styled),
// built directly since run content hashes are computed for every run of every sweep. Scalars the emitter
// might quote or escape (user-given names and paths) and block collections (dynamic groups, 2:4 layer lists)
// go through the emitter one key at a time; canonical_yaml_test compares the text with the emitter's.
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "schemas/experiment_config.h"
#include "schemas/spec_keys.h"

namespace nmsparse {
namespace {

// Words YAML readers take for null: the emitter quotes them (true/false it writes plain).
bool IsReservedWord(absl::string_view text) { return text == "~" || absl::EqualsIgnoreCase(text, "null"); }

// True for text the emitter certainly writes plain and unchanged: ASCII letters, digits and _ . / + , -
// with single inner spaces, starting with a letter, digit, _ or /.
bool IsSurelyPlain(absl::string_view text) {
  if (text.empty() || IsReservedWord(text)) return false;
  const char first = text.front();
  if (!absl::ascii_isalnum(first) && first != '_' && first != '/') return false;
  if (text.back() == ' ') return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool word = absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '/' || c == '+' || c == '-';
    const bool comma = c == ',' && i + 1 < text.size() && text[i + 1] != ' ';
    const bool space = c == ' ' && text[i + 1] != ' ';
    if (!word && !comma && !space) return false;
  }
  return true;
}

// The flow text of a flow-styled node whose scalars are all surely plain ("[{kind: SPARSE, fraction: 1}]"),
// or false when the emitter must write it.
bool AppendFlow(const YAML::Node& node, std::string* out) {
  if (node.IsScalar()) {
    if (!IsSurelyPlain(node.Scalar()) || node.Scalar().find(',') != std::string::npos) return false;
    out->append(node.Scalar());
    return true;
  }
  const bool map = node.IsMap();
  if (!map && !node.IsSequence()) return false;
  out->append(map ? "{" : "[");
  bool first = true;
  for (const auto& entry : node) {
    if (!first) out->append(", ");
    first = false;
    if (map) {
      if (!AppendFlow(entry.first, out)) return false;
      out->append(": ");
      if (!AppendFlow(entry.second, out)) return false;
    } else if (!AppendFlow(entry, out)) {
      return false;
    }
  }
  out->append(map ? "}" : "]");
  return true;
}

class TextWriter : public SpecWriter {
 public:
  explicit TextWriter(std::string* out) : out_(out) {}

  void Scalar(const KeyInfo& key, const SpecScalar& value) override {
    if (const auto* i = std::get_if<int64_t>(&value); i != nullptr && *i >= 0) {  // Digits: plain.
      absl::StrAppend(out_, indent_, key.name, ": ", *i, "\n");
      return;
    }
    std::string number;  // The text of a number.
    absl::string_view text;
    if (const auto* b = std::get_if<bool>(&value)) {
      text = *b ? "true" : "false";
    } else if (const auto* s = std::get_if<absl::string_view>(&value)) {
      text = *s;
    } else {
      number = ScalarText(value);
      text = number;
    }
    if (text.empty()) {
      absl::StrAppend(out_, indent_, key.name, ": \"\"\n");
    } else if (IsSurelyPlain(text)) {
      absl::StrAppend(out_, indent_, key.name, ": ", text, "\n");
    } else {
      Emit(key.name, YAML::Node(std::string(text)));
    }
  }

  void Collection(const KeyInfo& key, const YAML::Node& value) override {
    if (value.Style() == YAML::EmitterStyle::Flow) {
      std::string flow;
      if (AppendFlow(value, &flow)) {
        absl::StrAppend(out_, indent_, key.name, ": ", flow, "\n");
        return;
      }
    }
    Emit(key.name, value);
  }

  void EmptyList(const KeyInfo& key) override { absl::StrAppend(out_, indent_, key.name, ": []\n"); }

  // Sections of the experiment are block maps (flow maps are nested in collections).
  void BeginSection(const KeyInfo& key) override {
    absl::StrAppend(out_, indent_, key.name, ":\n");
    indent_ += "  ";
  }

  void EndSection() override { indent_.resize(indent_.size() - 2); }

 private:
  // `key: value` as the emitter writes it, each line at the current indentation.
  void Emit(const std::string& key, const YAML::Node& value) {
    YAML::Emitter emitter;
    emitter << YAML::BeginMap << YAML::Key << key << YAML::Value << value << YAML::EndMap;
    for (absl::string_view line : absl::StrSplit(emitter.c_str(), '\n', absl::SkipEmpty())) {
      absl::StrAppend(out_, indent_, line, "\n");
    }
  }

  std::string* out_;
  std::string indent_;
};

}  // namespace

std::string CanonicalYaml(const ExperimentConfig& config) {
  std::string out;
  out.reserve(1536);
  TextWriter writer(&out);
  ExperimentKeys().Write(config, &writer);
  return out;
}

}  // namespace nmsparse
