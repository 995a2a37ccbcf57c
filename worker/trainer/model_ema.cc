#include "worker/trainer/model_ema.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace nmsparse {

ModelEma::ModelEma(torch::nn::Module& model, double decay) : decay_(decay) {
  for (const auto& item : model.named_parameters()) {
    names_.push_back(item.key());
    params_.push_back(item.value());
  }
  CopyFromModel();
}

void ModelEma::CopyFromModel() {
  torch::NoGradGuard no_grad;
  ema_.clear();
  for (const auto& p : params_) ema_.push_back(p.detach().clone());
}

// timm: `decay * e + (1 - decay) * m`, each product rounded to float32 before the sum; mul_ then add_ with
// alpha rounds the same way (1 - decay is taken in double first, as Python does).
void ModelEma::Update() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> weights;
  weights.reserve(params_.size());
  for (const auto& p : params_) weights.push_back(p.detach());
  at::_foreach_mul_(ema_, decay_);
  at::_foreach_add_(ema_, weights, 1.0 - decay_);
}

void ModelEma::WithEmaWeights(const std::function<void()>& evaluate) {
  std::vector<torch::Tensor> trained;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      trained.push_back(params_[i].detach().clone());
      params_[i].detach().copy_(ema_[i]);
    }
  }
  struct Restore {  // Also when `evaluate` throws, so that training never continues from the EMA.
    std::vector<torch::Tensor>& params;
    std::vector<torch::Tensor>& trained;
    ~Restore() {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) params[i].detach().copy_(trained[i]);
    }
  } restore{params_, trained};
  evaluate();
}

NamedTensors ModelEma::StateDict() const {
  NamedTensors state;
  for (size_t i = 0; i < ema_.size(); ++i) state.emplace_back(names_[i], ema_[i]);
  return state;
}

absl::Status ModelEma::Load(const NamedTensors& state) {
  if (state.empty()) {
    CopyFromModel();
    return absl::OkStatus();
  }
  if (state.size() != names_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the checkpoint's model EMA has ", state.size(),
                                                   " tensors, the model ", names_.size(), " parameters"));
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < state.size(); ++i) {
    if (state[i].first != names_[i] || !state[i].second.sizes().equals(ema_[i].sizes())) {
      return absl::InvalidArgumentError(absl::StrCat("the checkpoint's model EMA tensor ", state[i].first,
                                                     " does not match the model's parameter ", names_[i]));
    }
  }
  for (size_t i = 0; i < state.size(); ++i) ema_[i].copy_(state[i].second);
  return absl::OkStatus();
}

}  // namespace nmsparse
