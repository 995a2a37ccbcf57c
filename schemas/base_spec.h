// A sweep's base spec parsed once, for the many runs that each override a few of its keys: a run re-parses
// only the top-level keys its overrides touch (from the base's YAML of that key with the overrides applied)
// into a copy of the parsed base. ParseExperimentNode of a nested spec is ParseExperimentKey in key order,
// and the untouched keys parsed cleanly in the base, so the config and the first error equal those of
// parsing the whole overridden spec. A base that does not parse alone has every key re-parsed, into a
// default config: the whole spec's parse. (The base on the wire is always a nested spec: BaseSpecYaml.)
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

// A base spec's wire and stored form (v1.SweepSpec.base; nmctl's --set and a fork apply their overrides to
// it): the YAML of its key table (ExperimentConfigToYaml), with the semi_structured section kept when it
// chooses no layer (runs whose overrides choose one take its other keys), less every key whose value the
// parser derives by itself from the others, such as sparsity's QKV ratio where it is the N:M ratio: an
// override of N:M then moves it, as it would in the spec file. Parses back to the config that the full YAML
// gives.
YAML::Node BaseSpecNode(const ExperimentConfig& config);
std::string BaseSpecYaml(const ExperimentConfig& config);

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
