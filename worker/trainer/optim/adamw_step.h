// The AdamW update of a training step. On a GPU, ATen's fused multi-tensor kernel (compat::FusedAdamW: one
// launch per parameter group instead of several per parameter, as torch.optim.AdamW(fused=True)); elsewhere,
// and on LibTorch without it, torch::optim::AdamW::step(). Both keep their moments in the optimizer's own
// state, so checkpoints, the dynamic-sparsity masking of moments and resumes see one format.
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_ADAMW_STEP_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_ADAMW_STEP_H_

#include <torch/optim/adamw.h>

#include <string>
#include <vector>

#include "worker/trainer/optim/optimizer_update.h"

namespace nmsparse {

class AdamWStep : public OptimizerUpdate {
 public:
  // `fused`: use the fused kernel where this LibTorch has one (compat::kHaveFusedAdamW).
  AdamWStep(torch::optim::AdamW& optimizer, bool fused);

  // One update of every parameter that has a gradient. Allocates only the first time a parameter is seen.
  // `found_inf` (the loss scaler's [1] flag; fused only): where it is 1 the kernel changes nothing.
  void operator()(const torch::Tensor& found_inf) override;

  // The fused step's device counters into the optimizer state's host counts (which checkpoints store): after
  // steps skipped on the device they differ. One host read; called when saving. Nothing when not fused.
  void SyncHostSteps() override;

  bool fused() const { return fused_; }
  bool skips_on_device() const override { return fused_; }
  std::string Describe() const override { return fused_ ? "fused AdamW" : "AdamW"; }

 private:
  void FusedStep(const torch::Tensor& found_inf);

  torch::optim::AdamW& optimizer_;
  bool fused_;
  // Per parameter (by its position in the groups): the step count on the parameter's device, which the
  // fused kernel reads; the optimizer state keeps the host count that checkpoints store. Made from it at
  // the first step after construction (so after a resume's LoadCheckpoint).
  std::vector<std::vector<torch::Tensor>> device_steps_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_ADAMW_STEP_H_
