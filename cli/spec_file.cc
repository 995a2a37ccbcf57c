#include "cli/spec_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/unicode_text.h"
#include "common/visible_text.h"
#include "schemas/base_spec.h"
#include "schemas/experiment_config.h"
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

// Specs travel as proto3 strings, which must be UTF-8 (the coordinator could not even parse the request):
// other bytes are refused here, where the error can say where they are.
absl::Status CheckUtf8(const std::string& text, const std::string& where) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string::npos) return absl::OkStatus();
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": byte ", bad, " (line ", line, ") is not UTF-8; specs are UTF-8 text"));
}

}  // namespace

absl::StatusOr<v1::SweepSpec> LoadSpecFile(const std::string& path, const std::vector<std::string>& sets,
                                           std::vector<std::string>* warnings) {
  // Read once, bounded by the spec file size limit before any parsing.
  NM_ASSIGN_OR_RETURN(std::string text, ReadSpecText(path));
  NM_RETURN_IF_ERROR(CheckUtf8(text, path));
  for (const std::string& set : sets) {
    NM_RETURN_IF_ERROR(CheckUtf8(set, absl::StrCat("--set '", VisibleText(set, 80), "'")));
  }
  v1::SweepSpec spec;
  absl::StatusOr<ExperimentConfig> base;
  if (IsSweepText(text)) {
    absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(text, path, warnings);
    if (!sweep.ok()) return sweep.status();
    spec = *std::move(sweep);
    if (sets.empty()) return spec;
    base = ParseExperimentYaml(spec.base(), "base");  // BaseSpecYaml's text: it parses.
  } else {
    base = ParseExperimentYaml(text, path, warnings);
    if (!base.ok()) return base.status();
    spec.set_name(base->name.empty() ? FileStem(path) : base->name);
  }
  if (!base.ok()) return base.status();
  absl::StatusOr<ExperimentConfig> overridden = ApplySetOverrides(sets, *base);
  if (!overridden.ok()) return overridden.status();
  spec.set_base(BaseSpecYaml(*overridden));
  return spec;
}

}  // namespace nmsparse::cli
