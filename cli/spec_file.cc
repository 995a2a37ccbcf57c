#include "cli/spec_file.h"

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"
#include "schemas/proto_bridge.h"
#include "schemas/spec_overrides.h"
#include "schemas/spec_text.h"
#include "schemas/sweep.h"

namespace nmsparse::cli {
namespace {

// A sweep file has a base (inline or in another file) or axes; anything else is one experiment.
bool IsSweepText(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return true;  // Let the sweep parser report what is wrong.
    for (const char* key : {"base", "base_file", "grid", "random"}) {
      if (root[key]) return true;
    }
    return false;
  } catch (const YAML::Exception&) {
    return true;  // Not YAML: the sweep parser words the error.
  }
}

std::string FileStem(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

}  // namespace

absl::StatusOr<v1::SweepSpec> LoadSpecFile(const std::string& path, const std::vector<std::string>& sets,
                                           std::vector<std::string>* warnings) {
  // Read once, bounded by the spec file size limit before any parsing.
  absl::StatusOr<std::string> text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  v1::SweepSpec spec;
  if (IsSweepText(*text)) {
    absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(*text, path, warnings);
    if (!sweep.ok()) return sweep.status();
    spec = *std::move(sweep);
  } else {
    absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(*text, path, warnings);
    if (!config.ok()) return config.status();
    spec.set_name(config->name.empty() ? FileStem(path) : config->name);
    *spec.mutable_base() = ToProto(*config);
  }
  absl::Status status = ApplySetOverrides(sets, spec.mutable_base());
  if (!status.ok()) return status;
  return spec;
}

}  // namespace nmsparse::cli
