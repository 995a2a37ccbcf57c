#include "worker/trainer/lion.h"

#include <torch/torch.h>

namespace nmsparse {

void LionUpdate(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& exp_avg,
                const LionHyper& hyper) {
  torch::NoGradGuard no_grad;
  param.mul_(1.0 - hyper.lr * hyper.weight_decay);
  // timm: update = exp_avg.clone().mul_(beta1).add_(grad, alpha=1 - beta1).sign_().
  const torch::Tensor update = exp_avg.mul(hyper.beta1).add_(grad, 1.0 - hyper.beta1).sign_();
  param.add_(update, -hyper.lr);
  exp_avg.lerp_(grad, 1.0 - hyper.beta2);
}

}  // namespace nmsparse
