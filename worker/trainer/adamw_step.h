// The AdamW update of a training step. On a GPU, ATen's fused multi-tensor kernel (compat::FusedAdamW: one
// launch per parameter group instead of several per parameter, as torch.optim.AdamW(fused=True)); elsewhere,
// and on LibTorch without it, torch::optim::AdamW::step(). Both keep their moments in the optimizer's own
// state, so checkpoints, the dynamic-sparsity masking of moments and resumes see one format.
#ifndef NMSPARSE_WORKER_TRAINER_ADAMW_STEP_H_
#define NMSPARSE_WORKER_TRAINER_ADAMW_STEP_H_

#include <torch/optim/adamw.h>

#include <vector>

namespace nmsparse {

class AdamWStep {
 public:
  // `fused`: use the fused kernel where this LibTorch has one (compat::kHaveFusedAdamW).
  AdamWStep(torch::optim::AdamW& optimizer, bool fused);

  // One update of every parameter that has a gradient. Allocates only the first time a parameter is seen.
  void operator()();

  bool fused() const { return fused_; }

 private:
  void FusedStep();

  torch::optim::AdamW& optimizer_;
  bool fused_;
  // Per parameter (by its position in the groups): the step count on the parameter's device, which the
  // fused kernel reads; the optimizer state keeps the host count that checkpoints store. Made from it at
  // the first step after construction (so after a resume's LoadCheckpoint).
  std::vector<std::vector<torch::Tensor>> device_steps_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_ADAMW_STEP_H_
