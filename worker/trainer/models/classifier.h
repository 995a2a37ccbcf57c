// The interface the trainer sees: an image classifier module (ViT or SwinV2) mapping [B, C, H, W] images to
// [B, num_classes] logits.
#ifndef NMSPARSE_WORKER_TRAINER_MODELS_CLASSIFIER_H_
#define NMSPARSE_WORKER_TRAINER_MODELS_CLASSIFIER_H_

#include <torch/nn/module.h>
#include <torch/types.h>

#include "worker/trainer/models/layer_group_matcher.h"

namespace nmsparse {

class ClassifierImpl : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& images) = 0;
  // timm's group_matcher(coarse=False) of the model: its parameters' layers for layer-wise lr decay.
  virtual LayerGroupMatcher group_matcher() const = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODELS_CLASSIFIER_H_
