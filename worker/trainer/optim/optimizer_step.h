// The update of a training step once its gradients are complete (averaged over the ranks): the sparsity
// method's after-backward hook, gradient clipping, its before-update hook, the optimizer's update
// (optimizer_update.h) and the method's after-step hook, in that order. With a loss scaler (fp16), the
// gradients are unscaled first (so clipping sees true gradients), and a step whose gradients hold an inf or
// NaN is skipped whole: no optimizer update and no sparsity update, as torch.amp.GradScaler.step skips
// optimizer.step(); the scaler then backs off or grows.
//
// The skip decision: where the update skips on the device (the fused AdamW kernel and Lion on a GPU) it
// stays there, the update reading the scaler's found-inf flag and leaving parameters and moments as they
// were (the step counters are put back the same way); no host read. Elsewhere (the CPU, where tensors are
// host memory and a read waits for nothing), the flag is read on the host, as GradScaler.step does for
// unfused optimizers. The sparsity
// method's hooks are host calls: a method with work in them (dynamic sparsity) needs the host decision, so
// fp16 with dynamic sparsity is refused where the decision is on the device (NeedsHostSkip).
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_STEP_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_STEP_H_

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/optim/optimizer_update.h"
#include "worker/trainer/precision/loss_scaler.h"

namespace nmsparse {

class OptimizerStep {
 public:
  // `scaler` null: no loss scaling (fp32, bf16). `clip_grad_norm` <= 0: no clipping. All outlive this.
  OptimizerStep(std::vector<torch::Tensor> params, OptimizerUpdate& update, SparsityMethod& sparsity,
                double clip_grad_norm, LossScaler* scaler);

  // After backward of optimizer step `global_step` (0-based). `observe`, when set, sees the complete
  // (unscaled) gradients after the sparsity method's after-backward hook and before clipping: the
  // diagnostics of a log point (worker/sparsity/sparsity_diagnostics.h).
  void operator()(int64_t global_step, const std::function<void()>& observe = {});

  // Whether a skipped step is decided on the host (a read of the found-inf flag per step).
  bool host_skip() const { return scaler_ != nullptr && !update_.skips_on_device(); }

 private:
  std::vector<torch::Tensor> params_;
  OptimizerUpdate& update_;
  SparsityMethod& sparsity_;
  double clip_grad_norm_;
  LossScaler* scaler_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_STEP_H_
