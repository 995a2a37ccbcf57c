// `--set key.path=value` on an experiment spec: nmctl submit's and validate's overrides of a base spec, and
// nmctl fork's overrides of a parent run's spec, through one code path (ApplyOverride on the spec's YAML,
// then the spec key table's own checks).
#ifndef NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_
#define NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

// `spec` with each "key.path=value" of `sets` applied in order to its YAML (BaseSpecNode, so that keys the
// parser derives follow the overrides: a new sparsity.n_sparsity / m_sparsity moves a QKV ratio that was
// the N:M ratio, unless the Q/K/V keys are set themselves). Errors are InvalidArgument "--set
// key.path=value: reason" (unknown key path, bad value).
absl::StatusOr<ExperimentConfig> ApplySetOverrides(const std::vector<std::string>& sets,
                                                   const ExperimentConfig& spec);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_
