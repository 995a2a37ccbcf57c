// The optimizer of optimizer.name (AdamW, or timm's Lion: lion.h) over timm's two parameter groups: weight
// decay on weight matrices, none on 1-D parameters (norms, biases), pos_embed, cls_token, and SwinV2's
// logit_scale and cpb_mlp (timm's no_weight_decay). With optimizer.layer_decay, timm's
// param_groups_layer_decay instead: one group per (layer, decay or not), in order of first appearance, each
// with its learning-rate scale (layer_decay.h).
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_H_

#include <torch/nn/module.h>
#include <torch/optim/adamw.h>

#include <memory>
#include <string>
#include <vector>

#include "schemas/experiment_config.h"
#include "worker/sparsity/step_method.h"
#include "worker/trainer/optim/optimizer_update.h"

namespace nmsparse {

// True for the parameters timm excludes from weight decay.
bool NoWeightDecay(const std::string& name, const torch::Tensor& param);

// Parameters trained alike: timm's param group.
struct ParamGroup {
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  double lr_scale = 1.0;  // The group trains at the schedule's rate times this.
  double weight_decay = 0.0;
};

// Without layer decay group 0 decays, group 1 does not, both at scale 1. With it, `model` must be a
// ClassifierImpl (its group_matcher() gives the layers).
std::vector<ParamGroup> TimmParamGroups(torch::nn::Module& model, const OptimizerConfig& config);

// AdamW over TimmParamGroups, each group starting at config.lr times its scale (the schedule sets it every
// step). `lr_scales`, when given, receives each group's scale, for SetLearningRate.
std::unique_ptr<torch::optim::AdamW> MakeAdamW(torch::nn::Module& model, const OptimizerConfig& config,
                                               std::vector<double>* lr_scales = nullptr);

// The optimizer of config.name with its update (fused AdamW on a GPU where LibTorch has it) and each group's
// learning-rate scale. With `step_switch` (sparsity.recipe STEP, AdamW only), STEP's update over AdamW's
// (step_update.h). Throws std::invalid_argument for a name it does not know.
struct TrainingOptimizer {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<OptimizerUpdate> update;
  std::vector<double> lr_scales;
};
TrainingOptimizer MakeOptimizer(torch::nn::Module& model, const OptimizerConfig& config, bool on_gpu,
                                std::shared_ptr<StepSwitch> step_switch = nullptr);

// Sets the learning rate of every group: `lr`, times lr_scales[g] for group g when lr_scales is not empty
// (timm's Scheduler: lr * param_group['lr_scale']).
void SetLearningRate(torch::optim::Optimizer& optimizer, double lr,
                     const std::vector<double>& lr_scales = {});

// Scales the gradients so that their global L2 norm is at most `max_norm`, by max_norm / (norm + 1e-6) capped
// at 1, as torch.nn.utils.clip_grad_norm_ does. The coefficient stays on the device: unlike LibTorch's
// clip_grad_norm_, which reads the norm on the host, it never waits for the GPU. Returns the norm before
// clipping (a device scalar).
torch::Tensor ClipGradNorm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_H_
