#include "worker/trainer/optimizer.h"

#include <torch/torch.h>

#include <stdexcept>

#include "absl/strings/match.h"
#include "worker/compat/torch_compat.h"

namespace nmsparse {

bool NoWeightDecay(const std::string& name, const torch::Tensor& param) {
  return param.dim() <= 1 || absl::EndsWith(name, ".bias") || name == "pos_embed" || name == "cls_token" ||
         absl::StrContains(name, "cpb_mlp") || absl::StrContains(name, "logit_scale");
}

std::unique_ptr<torch::optim::AdamW> MakeAdamW(torch::nn::Module& model, const OptimizerConfig& config) {
  if (config.name != "adamw") throw std::invalid_argument("optimizer.name: only adamw is implemented");
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : model.named_parameters()) {
    (NoWeightDecay(item.key(), item.value()) ? no_decay : decay).push_back(item.value());
  }
  auto options = torch::optim::AdamWOptions(config.lr)
                     .betas({config.beta1, config.beta2})
                     .eps(config.eps)
                     .weight_decay(config.weight_decay);
  auto no_decay_options = std::make_unique<torch::optim::AdamWOptions>(options);
  no_decay_options->weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(options));
  groups.emplace_back(no_decay, std::move(no_decay_options));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  }
}

torch::Tensor ClipGradNorm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return torch::zeros({}, torch::kFloat32);
  // Multi-tensor kernels, as torch.nn.utils.clip_grad_norm_(foreach=True): a ViT-B's ~150 gradients take a
  // few launches instead of one norm and one multiply per gradient. The weights (and so the gradients) are
  // fp32, one dtype: one group.
  const std::vector<torch::Tensor> norms = compat::ForeachNorm(grads);
  const torch::Tensor total = torch::stack(norms).to(torch::kFloat32).norm(2);
  const torch::Tensor coefficient = (max_norm / (total + 1e-6)).clamp_max(1.0);
  compat::ForeachMulByTensor(grads, coefficient.to(grads[0].scalar_type()));
  return total;
}

}  // namespace nmsparse
