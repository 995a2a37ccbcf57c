#include "worker/trainer/optim/optimizer.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "absl/strings/match.h"
#include "worker/compat/torch_compat.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/optim/adamw_step.h"
#include "worker/trainer/optim/layer_decay.h"
#include "worker/trainer/optim/lion.h"
#include "worker/trainer/optim/step_update.h"

namespace nmsparse {

bool NoWeightDecay(const std::string& name, const torch::Tensor& param) {
  return param.dim() <= 1 || absl::EndsWith(name, ".bias") || name == "pos_embed" || name == "cls_token" ||
         absl::StrContains(name, "cpb_mlp") || absl::StrContains(name, "logit_scale");
}

namespace {

std::vector<ParamGroup> LayerDecayGroups(torch::nn::Module& model, const OptimizerConfig& config) {
  const auto* classifier = dynamic_cast<const ClassifierImpl*>(&model);
  if (classifier == nullptr) {
    throw std::invalid_argument("optimizer.layer_decay: the model declares no layers (not a ViT or SwinV2)");
  }
  const auto named = model.named_parameters();
  std::vector<std::string> names;
  for (const auto& item : named) names.push_back(item.key());
  const std::vector<int> layers = LayerIds(names, classifier->group_matcher());
  const int num_layers = *std::max_element(layers.begin(), layers.end()) + 1;
  const std::vector<double> scales = LayerScales(num_layers, config.layer_decay);
  std::vector<ParamGroup> groups;
  std::map<std::pair<int, bool>, size_t> group_of;  // (layer, decays) -> index, in order of first use.
  for (size_t i = 0; i < names.size(); ++i) {
    const bool decays = !NoWeightDecay(names[i], named[i].value());
    auto [it, added] = group_of.emplace(std::make_pair(layers[i], decays), groups.size());
    if (added) groups.push_back({{}, {}, scales[layers[i]], decays ? config.weight_decay : 0.0});
    groups[it->second].names.push_back(names[i]);
    groups[it->second].params.push_back(named[i].value());
  }
  return groups;
}

}  // namespace

std::vector<ParamGroup> TimmParamGroups(torch::nn::Module& model, const OptimizerConfig& config) {
  if (config.layer_decay > 0.0) return LayerDecayGroups(model, config);
  std::vector<ParamGroup> groups(2);
  groups[0].weight_decay = config.weight_decay;
  for (const auto& item : model.named_parameters()) {
    ParamGroup& group = groups[NoWeightDecay(item.key(), item.value()) ? 1 : 0];
    group.names.push_back(item.key());
    group.params.push_back(item.value());
  }
  return groups;
}

std::unique_ptr<torch::optim::AdamW> MakeAdamW(torch::nn::Module& model, const OptimizerConfig& config,
                                               std::vector<double>* lr_scales) {
  auto options = torch::optim::AdamWOptions(config.lr)
                     .betas({config.beta1, config.beta2})
                     .eps(config.eps)
                     .weight_decay(config.weight_decay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (lr_scales != nullptr) lr_scales->clear();
  for (const ParamGroup& group : TimmParamGroups(model, config)) {
    auto group_options = std::make_unique<torch::optim::AdamWOptions>(options);
    group_options->lr(config.lr * group.lr_scale).weight_decay(group.weight_decay);
    groups.emplace_back(group.params, std::move(group_options));
    if (lr_scales != nullptr) lr_scales->push_back(group.lr_scale);
  }
  return std::make_unique<torch::optim::AdamW>(std::move(groups), options);
}

namespace {

// Lion over TimmParamGroups: timm builds every optimizer's groups alike (param_groups_weight_decay or
// param_groups_layer_decay).
std::unique_ptr<Lion> MakeLion(torch::nn::Module& model, const OptimizerConfig& config,
                               std::vector<double>* lr_scales) {
  auto options = LionOptions(config.lr).betas({config.beta1, config.beta2}).weight_decay(config.weight_decay);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  lr_scales->clear();
  for (const ParamGroup& group : TimmParamGroups(model, config)) {
    auto group_options = std::make_unique<LionOptions>(options);
    group_options->lr(config.lr * group.lr_scale).weight_decay(group.weight_decay);
    groups.emplace_back(group.params, std::move(group_options));
    lr_scales->push_back(group.lr_scale);
  }
  return std::make_unique<Lion>(std::move(groups), options);
}

}  // namespace

TrainingOptimizer MakeOptimizer(torch::nn::Module& model, const OptimizerConfig& config, bool on_gpu,
                                std::shared_ptr<StepSwitch> step_switch) {
  TrainingOptimizer made;
  if (step_switch != nullptr && config.name != "adamw") {
    throw std::invalid_argument("optimizer.name: '" + config.name +
                                "' with sparsity.recipe STEP: only adamw");
  }
  if (config.name == "adamw") {
    auto adamw = MakeAdamW(model, config, &made.lr_scales);
    if (step_switch != nullptr) {
      made.update = std::make_unique<StepUpdate>(*adamw, /*fused=*/on_gpu, std::move(step_switch));
    } else {
      made.update = std::make_unique<AdamWStep>(*adamw, /*fused=*/on_gpu);
    }
    made.optimizer = std::move(adamw);
  } else if (config.name == "lion") {
    auto lion = MakeLion(model, config, &made.lr_scales);
    made.update = std::make_unique<LionStep>(*lion, on_gpu);
    made.optimizer = std::move(lion);
  } else {
    throw std::invalid_argument("optimizer.name: '" + config.name + "' is not adamw or lion");
  }
  return made;
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& lr_scales) {
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const double scale = lr_scales.empty() ? 1.0 : lr_scales.at(g);
    groups[g].options().set_lr(lr * scale);
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
