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

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIMIZER_H_
