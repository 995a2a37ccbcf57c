// STEP (Lu et al., ICML 2023; docs/sparsity-method.md §13), as Hu et al. implement it (AdamW_STEP and its
// module): dense AdamW while Adam's second moment v still moves, then hard 2:4 straight through with v
// frozen. The decision lives on the device (StepSwitch): the optimizer's update
// (worker/trainer/optim/step_update.h) runs the switch test after every step, and the sparse linears select
// dense or 2:4 weights from its flag, so no step waits for the GPU. This method wraps the N:M engine (as STE
// 2:4) for the layers and reports.
#ifndef NMSPARSE_WORKER_SPARSITY_STEP_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_STEP_METHOD_H_

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// The window of STEP's switch test, int(1 / (1 - beta2)) in double arithmetic as the authors' Python computes
// it: 0.999 gives 999 and 0.99 gives 99 (1 - beta2 rounds up), 0.9 gives 10. Kept so, not "fixed".
int64_t StepWindow(double beta2);

// STEP's shared state: the sparse weights (the authors' params with a `mask` attribute), the switch test's
// settings, and its device tensors. The method fills `weights` and the bounds; the update allocates the
// tensors at its first step (or the checkpoint brings them).
struct StepSwitch {
  std::vector<std::pair<std::string, torch::Tensor>> weights;
  bool clipping = true;  // The authors' clipping=(T_min, T_max); false: switch iff the window's mean < eps.
  int64_t t_min = 0;     // Switch when the test holds and more than t_min steps ran...
  int64_t t_max = 0;     // ... or, with clipping, once more than t_max ran.
  int z_option = 1;      // Z_t = mean |dv| (1) or exp(mean log |dv|) (2).

  // Device state ([] float64 unless said): optimizer steps taken (the authors' t), Z_t values pushed into
  // the ring `window` ([StepWindow(beta2)]), and `sparse` (0 or 1) once switched. `frozen[i]` is weights[i]'s
  // v at the switch (its dtype and shape), not bias-corrected.
  torch::Tensor steps, pushed, window, sparse;
  std::vector<torch::Tensor> frozen;

  bool allocated() const { return sparse.defined(); }
  // The state for a checkpoint, and back (the names of a StepSwitch with the same weights).
  NamedTensors StateDict() const;
  absl::Status LoadStateDict(const NamedTensors& state);
};

// `config.sparsity_type` must be STEP (validated as 2:4 on linears with AdamW); options.step_switch() the
// switch the trainer gave the optimizer's update too.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateStepMethod(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_STEP_METHOD_H_
