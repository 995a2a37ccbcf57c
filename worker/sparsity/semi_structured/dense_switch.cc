#include "worker/sparsity/semi_structured/dense_switch.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace nmsparse {

absl::StatusOr<DenseSwitch> DenseSwitch::Create(const SemiStructuredConfig& config,
                                                const PhaseSchedule& phases, int64_t steps_per_epoch) {
  const int64_t total_steps = static_cast<int64_t>(phases.total_epochs()) * steps_per_epoch;
  if (config.dense_after_phase >= 0) {
    const auto& segments = phases.segments();
    if (config.dense_after_phase >= static_cast<int>(segments.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("semi_structured.dense_after.phase: value ", config.dense_after_phase,
                       " is out of range: the run has ", segments.size(), " phases"));
    }
    return DenseSwitch(segments[config.dense_after_phase].begin_epoch * steps_per_epoch);
  }
  // The 1e-9 keeps F * steps that is an integer in exact arithmetic from rounding down (0.7 * 100 = 69.99..).
  const double first = std::floor(config.dense_after_fraction * static_cast<double>(total_steps) + 1e-9);
  return DenseSwitch(static_cast<int64_t>(first));
}

}  // namespace nmsparse
