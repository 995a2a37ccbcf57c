// When the semi-structured layers swap back to dense (the sparse-then-dense recipe): from a fraction of the
// run's optimizer steps, or from the first step of one of the sparsity section's phases. Derived from the
// global step alone, so a resumed run swaps at the same step. Plain C++ (no LibTorch).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_DENSE_SWITCH_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_DENSE_SWITCH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "schemas/semi_structured_config.h"
#include "worker/sparsity/phase_schedule.h"

namespace nmsparse {

class DenseSwitch {
 public:
  // dense_after.fraction F: dense from step floor(F * total steps) (F = 1: never); dense_after.phase K: from
  // the first step of phase segment K. InvalidArgument naming semi_structured.dense_after.phase when K is
  // not a segment of `phases`.
  static absl::StatusOr<DenseSwitch> Create(const SemiStructuredConfig& config, const PhaseSchedule& phases,
                                            int64_t steps_per_epoch);

  // Whether optimizer step `global_step` (0-based) trains the chosen layers dense.
  bool DenseAt(int64_t global_step) const { return global_step >= first_dense_step_; }
  int64_t first_dense_step() const { return first_dense_step_; }

 private:
  explicit DenseSwitch(int64_t first_dense_step) : first_dense_step_(first_dense_step) {}
  int64_t first_dense_step_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_DENSE_SWITCH_H_
