// CanonicalYaml by direct string building: the text yaml-cpp's emitter writes for ExperimentConfigToYaml
// (block maps indented by two spaces, plain scalars, the phase list in flow form, `dynamic: []`) at a
// fraction of the cost, since run content hashes are computed for every run of every sweep. Strings the
// emitter might quote or escape (user-given names and paths) take the emitter itself; canonical_yaml_test
// compares the two.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

// Words YAML readers take for null: the emitter quotes them (true/false it writes plain).
bool IsReservedWord(const std::string& text) {
  static const char* const kWords[] = {"null", "~"};
  const std::string lower = absl::AsciiStrToLower(text);
  for (const char* word : kWords) {
    if (lower == word) return true;
  }
  return false;
}

// True for text the emitter certainly writes plain and unchanged: ASCII letters, digits and _ . / + , -
// with single inner spaces, starting with a letter, digit, _ or /.
bool IsSurelyPlain(const std::string& text) {
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

// The emitter writes an empty string as "" and the texts above as they are.
bool DirectlyWritable(const std::vector<CanonicalSection>& sections) {
  for (const CanonicalSection& section : sections) {
    for (const auto& [key, text] : section.keys) {
      if (!text.empty() && !IsSurelyPlain(text)) return false;
    }
  }
  return true;
}

void AppendScalar(const std::string& indent, const std::string& key, const std::string& text,
                  std::string* out) {
  absl::StrAppend(out, indent, key, ": ", text.empty() ? "\"\"" : text, "\n");
}

// "phases: []" or "phases: [{kind: SPARSE, fraction: 0.8}, {kind: DENSE, fraction: 0.2}]".
void AppendPhases(const std::vector<PhaseSpec>& phases, std::string* out) {
  absl::StrAppend(out, "  phases: [");
  for (size_t i = 0; i < phases.size(); ++i) {
    absl::StrAppend(out, i == 0 ? "" : ", ", "{kind: ", ToString(phases[i].kind),
                    ", fraction: ", yaml_util::FormatDouble(phases[i].fraction), "}");
  }
  absl::StrAppend(out, "]\n");
}

}  // namespace

std::string CanonicalYaml(const ExperimentConfig& config) {
  // Dynamic groups (§7: nested schedules, globs the emitter may quote) are rare in sweeps: the emitter
  // writes them.
  if (config.sparsity.IsDynamic()) return CanonicalYamlByEmitter(config);
  if (config.semi_structured.Enabled()) return CanonicalYamlByEmitter(config);  // Lists of globs; rare.
  const std::vector<CanonicalSection> sections = CanonicalSections(config);
  if (!DirectlyWritable(sections)) return CanonicalYamlByEmitter(config);
  std::string out;
  out.reserve(1536);
  for (const CanonicalSection& section : sections) {
    if (!section.name.empty()) absl::StrAppend(&out, section.name, ":\n");
    const std::string indent = section.name.empty() ? "" : "  ";
    for (const auto& [key, text] : section.keys) AppendScalar(indent, key, text, &out);
  }
  AppendPhases(config.sparsity.phases, &out);
  absl::StrAppend(&out, "  dynamic: []\n");
  return out;
}

}  // namespace nmsparse
