#include "worker/trainer/optim/optimizer_step.h"

#include <utility>

#include "worker/trainer/device/host_reads.h"
#include "worker/trainer/optim/optimizer.h"

namespace nmsparse {

OptimizerStep::OptimizerStep(std::vector<torch::Tensor> params, OptimizerUpdate& update,
                             SparsityMethod& sparsity, double clip_grad_norm, LossScaler* scaler)
    : params_(std::move(params)),
      update_(update),
      sparsity_(sparsity),
      clip_grad_norm_(clip_grad_norm),
      scaler_(scaler) {}

void OptimizerStep::operator()(int64_t global_step, const std::function<void()>& observe) {
  if (scaler_ != nullptr) scaler_->Unscale(params_);
  const bool skip = host_skip() && ReadToHost(scaler_->found_inf())[0] > 0;
  if (!skip) {
    sparsity_.AfterBackward(global_step);
    if (observe) observe();
    // On a device-side skip clipping still runs; inf gradients make it NaN, which the skipped update and the
    // next zero_grad discard.
    if (clip_grad_norm_ > 0) ClipGradNorm(params_, clip_grad_norm_);
    sparsity_.BeforeOptimizerUpdate(global_step);
    update_(scaler_ != nullptr && !host_skip() ? scaler_->found_inf() : torch::Tensor());
    sparsity_.AfterOptimizerStep(global_step);
  }
  if (scaler_ != nullptr) scaler_->Update();
}

}  // namespace nmsparse
