// A sweep's base spec parsed once, for the many runs that each override a few of its keys: a run re-parses
// only the top-level keys its overrides touch (from the base's YAML of that key with the overrides applied)
// into a copy of the parsed base. ParseExperimentNode of a nested spec is ParseExperimentKey in key order,
// and the untouched keys parsed cleanly in the base, so the config and the first error equal those of
// parsing the whole overridden spec. A base that does not parse alone has every key re-parsed, into a
// default config: the whole spec's parse. (The base on the wire is always a nested spec: v1.ExperimentSpec.)
#ifndef NMSPARSE_SCHEMAS_BASE_SPEC_H_
#define NMSPARSE_SCHEMAS_BASE_SPEC_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// Key path -> YAML value text, applied in order (see ApplyOverride in schemas/sweep.h).
using Overrides = std::vector<std::pair<std::string, std::string>>;

class BaseSpec {
 public:
  explicit BaseSpec(const YAML::Node& base);

  // ParseExperimentNode of the base with `overrides` applied (ApplyOverride, in order); errors as theirs.
  absl::StatusOr<ExperimentConfig> WithOverrides(const Overrides& overrides) const;

 private:
  YAML::Node node_;
  absl::StatusOr<ExperimentConfig> parsed_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_BASE_SPEC_H_
