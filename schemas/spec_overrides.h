// `--set key.path=value` on an experiment spec: nmctl submit's and validate's overrides of a base spec, and
// nmctl fork's overrides of a parent run's spec, through one code path (the spec key table of ApplyOverride,
// then the spec file's own key checks).
#ifndef NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_
#define NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nmsparse/v1/experiment.pb.h"

namespace nmsparse {

// Applies each "key.path=value" of `sets` in order. Errors are InvalidArgument "--set key.path=value:
// reason" (unknown key path, bad value) and leave `spec` partly changed. As for sweep axes, a new
// sparsity.n_sparsity / m_sparsity carries over to the Q/K/V ratio when the spec had the same ratio there and
// the Q/K/V keys are not set themselves.
absl::Status ApplySetOverrides(const std::vector<std::string>& sets, v1::ExperimentSpec* spec);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPEC_OVERRIDES_H_
