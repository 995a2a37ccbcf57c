// AdamW with timm's two parameter groups: weight decay on weight matrices, none on 1-D parameters (norms,
// biases), pos_embed, cls_token, and SwinV2's logit_scale and cpb_mlp (timm's no_weight_decay).
#ifndef NMSPARSE_WORKER_TRAINER_OPTIMIZER_H_
#define NMSPARSE_WORKER_TRAINER_OPTIMIZER_H_

#include <torch/nn/module.h>
#include <torch/optim/adamw.h>

#include <memory>
#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse {

// True for the parameters timm excludes from weight decay.
bool NoWeightDecay(const std::string& name, const torch::Tensor& param);

// Group 0 decays, group 1 does not; both start at config.lr (the schedule sets it every step).
std::unique_ptr<torch::optim::AdamW> MakeAdamW(torch::nn::Module& model, const OptimizerConfig& config);

// Sets the learning rate of every group.
void SetLearningRate(torch::optim::Optimizer& optimizer, double lr);

// Scales the gradients so that their global L2 norm is at most `max_norm`, by max_norm / (norm + 1e-6) capped
// at 1, as torch.nn.utils.clip_grad_norm_ does. The coefficient stays on the device: unlike LibTorch's
// clip_grad_norm_, which reads the norm on the host, it never waits for the GPU. Returns the norm before
// clipping (a device scalar).
torch::Tensor ClipGradNorm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIMIZER_H_
