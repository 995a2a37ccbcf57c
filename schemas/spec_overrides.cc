#include "schemas/spec_overrides.h"

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "schemas/base_spec.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

absl::Status ApplySet(const std::string& assignment, YAML::Node& node) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", assignment, ": expected key.path=value"));
  }
  absl::Status status = ApplyOverride(node, assignment.substr(0, eq), assignment.substr(eq + 1));
  // The spec key table checks the value at once (schedule.epochs=-1 and =0 both read "must be >= 1"), so
  // the error names this assignment rather than a later one.
  if (status.ok()) status = ParseExperimentNode(node, "").status();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("--set ", assignment, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExperimentConfig> ApplySetOverrides(const std::vector<std::string>& sets,
                                                   const ExperimentConfig& spec) {
  if (sets.empty()) return spec;
  YAML::Node node = BaseSpecNode(spec);
  for (const std::string& assignment : sets) {
    if (absl::Status status = ApplySet(assignment, node); !status.ok()) return status;
  }
  return ParseExperimentNode(node, "");
}

}  // namespace nmsparse
