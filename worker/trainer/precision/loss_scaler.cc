#include "worker/trainer/precision/loss_scaler.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "worker/compat/torch_compat.h"

namespace nmsparse {

LossScaler::LossScaler(const LossScalerOptions& options, torch::Device device) : options_(options) {
  const auto on = torch::TensorOptions().device(device);
  scale_ = torch::full({1}, options.init_scale, on.dtype(torch::kFloat));
  growth_tracker_ = torch::zeros({1}, on.dtype(torch::kInt));
  found_inf_ = torch::zeros({1}, on.dtype(torch::kFloat));
  skipped_steps_ = torch::zeros({1}, on.dtype(torch::kFloat));
}

torch::Tensor LossScaler::Scale(const torch::Tensor& loss) const { return loss * scale_; }

void LossScaler::Unscale(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  found_inf_.zero_();
  // GradScaler's inverse: computed in double, then rounded to float32 once.
  const torch::Tensor inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  compat::AmpNonFiniteCheckAndUnscale(grads, found_inf_, inv_scale);
}

void LossScaler::Update() {
  torch::NoGradGuard no_grad;
  compat::AmpUpdateScale(scale_, growth_tracker_, found_inf_, options_.growth_factor, options_.backoff_factor,
                         options_.growth_interval);
  skipped_steps_.add_(found_inf_);
}

torch::Tensor LossScaler::State() const {
  return torch::cat({scale_.to(torch::kDouble), growth_tracker_.to(torch::kDouble),
                     skipped_steps_.to(torch::kDouble)})
      .to(torch::kCPU);
}

void LossScaler::Load(const torch::Tensor& state) {
  if (state.numel() != 3) {
    throw std::invalid_argument("the checkpoint's loss_scaler has " + std::to_string(state.numel()) +
                                " values, not 3 (scale, growth tracker, skipped steps)");
  }
  torch::NoGradGuard no_grad;
  const torch::Tensor s = state.to(torch::kDouble).reshape({3});
  scale_.copy_(s.slice(0, 0, 1));
  growth_tracker_.copy_(s.slice(0, 1, 2));
  skipped_steps_.copy_(s.slice(0, 2, 3));
}

}  // namespace nmsparse
