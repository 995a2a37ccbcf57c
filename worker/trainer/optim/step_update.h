// STEP's optimizer update (docs/sparsity-method.md §13; Hu et al.'s AdamW_STEP): AdamW (AdamWStep, reused as
// is) for every parameter, then, for the sparse weights, the switch test and the frozen second moment.
//
// Phase 1 (dense) is plain AdamW. After each step, Z_t = mean |v_t - v_{t-1}| (or its geometric mean) over
// the sparse weights enters a window of the last StepWindow(beta2) values; the run switches when more than
// T_max steps ran, or when the window's mean is below Adam's eps after more than T_min steps. At the switch
// v is frozen as it is, without bias correction. Phase 2 (sparse weights only):
//   p = p (1 - lr wd) - lr / (1 - beta1^t) * m_t / (sqrt(v_frozen) + eps^0.75);
// m and v keep their AdamW updates, the other parameters their AdamW step.
//
// Everything is decided on the device (no host read per step): the phase-2 weights replace AdamW's through
// torch::where on the switch flag, so each step also copies the sparse weights and their v once.
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_STEP_UPDATE_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_STEP_UPDATE_H_

#include <torch/optim/adamw.h>

#include <memory>
#include <string>

#include "worker/sparsity/step_method.h"
#include "worker/trainer/optim/adamw_step.h"

namespace nmsparse {

class StepUpdate : public OptimizerUpdate {
 public:
  // `optimizer` must outlive the update; `step_switch` gets its weights from the STEP method before the
  // first step.
  StepUpdate(torch::optim::AdamW& optimizer, bool fused, std::shared_ptr<StepSwitch> step_switch);

  void operator()(const torch::Tensor& found_inf) override;
  bool skips_on_device() const override { return adamw_.skips_on_device(); }
  void SyncHostSteps() override { adamw_.SyncHostSteps(); }
  std::string Describe() const override { return "STEP over " + adamw_.Describe(); }

 private:
  void Allocate();

  torch::optim::AdamW& optimizer_;
  AdamWStep adamw_;
  std::shared_ptr<StepSwitch> switch_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_STEP_UPDATE_H_
