#include "worker/trainer/optim/lion.h"

#include <torch/torch.h>

#include <memory>
#include <utility>

#include "worker/compat/torch_compat.h"

namespace nmsparse {

void LionUpdate(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& exp_avg,
                const LionHyper& hyper, const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  // timm: update = exp_avg.clone().mul_(beta1).add_(grad, alpha=1 - beta1).sign_().
  const torch::Tensor update = exp_avg.mul(hyper.beta1).add_(grad, 1.0 - hyper.beta1).sign_();
  if (!found_inf.defined()) {
    param.mul_(1.0 - hyper.lr * hyper.weight_decay);
    param.add_(update, -hyper.lr);
    exp_avg.lerp_(grad, 1.0 - hyper.beta2);
    return;
  }
  // keep is exactly 1 or 0: with 1 each line computes what the three above do.
  const torch::Tensor keep = (1.0 - found_inf).to(param.scalar_type());
  param.mul_(keep * (-hyper.lr * hyper.weight_decay) + 1.0);
  param.addcmul_(update, keep, -hyper.lr);
  exp_avg.lerp_(grad, keep * (1.0 - hyper.beta2));
}

void LionOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(betas);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void LionOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(betas_t, betas);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

void LionParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
}

void LionParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
}

Lion::Lion(std::vector<torch::optim::OptimizerParamGroup> param_groups, LionOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<LionOptions>(defaults)) {
  TORCH_CHECK(defaults.lr() >= 0, "Lion: invalid learning rate ", defaults.lr());
  TORCH_CHECK(defaults.weight_decay() >= 0, "Lion: invalid weight decay ", defaults.weight_decay());
}

torch::Tensor Lion::step(LossClosure closure) {
  torch::Tensor loss;
  if (closure != nullptr) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  Update(torch::Tensor());
  return loss;
}

void Lion::Update(const torch::Tensor& found_inf) {
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const LionOptions&>(group.options());
    const LionHyper hyper{options.lr(), std::get<0>(options.betas()), std::get<1>(options.betas()),
                          options.weight_decay()};
    for (auto& param : group.params()) {
      if (!param.grad().defined()) continue;
      auto& slot = state()[compat::OptimizerStateKey(param)];
      if (!slot) {
        auto fresh = std::make_unique<LionParamState>();
        fresh->exp_avg(torch::zeros_like(param, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      torch::Tensor exp_avg = static_cast<LionParamState&>(*slot).exp_avg();
      LionUpdate(param, param.grad(), exp_avg, hyper, found_inf);
    }
  }
}

void Lion::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<LionParamState, LionOptions>(archive, *this);
}

void Lion::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<LionParamState, LionOptions>(archive, *this);
}

}  // namespace nmsparse
