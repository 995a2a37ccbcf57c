// Linear and Conv2d layers whose weight the sparsity engine can mask. With no rule set (or a dense rule) they
// compute exactly what torch::nn::Linear / Conv2d compute, with the same parameter names (weight, bias), so
// models keep timm's names and a researcher can map every weight to the Python original.
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <memory>
#include <utility>

#include "worker/sparsity/eval_weight_cache.h"

namespace nmsparse {

struct LayerRule;         // Defined in worker/sparsity/layer_rule.h; set by SparsityEngine at every step.
class LinearAccelerator;  // worker/sparsity/semi_structured/linear_accelerator.h.

class SparseLinearImpl : public torch::nn::Module {
 public:
  SparseLinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  torch::Tensor forward(const torch::Tensor& input);
  // forward with another bias in place of `bias` (SwinV2's qkv: cat(q_bias, 0, v_bias)), through the same
  // path (the accelerator when set), so that no caller bypasses the 2:4 kernels.
  torch::Tensor ForwardWithBias(const torch::Tensor& input, const torch::Tensor& bias);

  // The weight the forward pass uses (W~ of the spec), with the rule's autograd semantics.
  torch::Tensor EffectiveWeight();
  void set_rule(std::shared_ptr<const LayerRule> rule) { rule_ = std::move(rule); }
  const std::shared_ptr<const LayerRule>& rule() const { return rule_; }
  // When set, forward is accelerator->Forward(input, weight, rule, bias) (the 2:4 semi-structured kernels).
  void set_accelerator(std::shared_ptr<LinearAccelerator> accelerator) {
    accelerator_ = std::move(accelerator);
  }
  bool accelerated() const { return accelerator_ != nullptr; }

  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out], undefined when bias = false

 private:
  std::shared_ptr<const LayerRule> rule_;
  std::shared_ptr<LinearAccelerator> accelerator_;
  EvalWeightCache eval_cache_;  // W~ across the batches of one evaluation.
};
TORCH_MODULE(SparseLinear);

// A 2-D convolution (used for patch embeddings: kernel = stride = patch).
class SparseConv2dImpl : public torch::nn::Module {
 public:
  SparseConv2dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
                   bool bias = true);
  torch::Tensor forward(const torch::Tensor& input);
  torch::Tensor EffectiveWeight();
  void set_rule(std::shared_ptr<const LayerRule> rule) { rule_ = std::move(rule); }
  const std::shared_ptr<const LayerRule>& rule() const { return rule_; }

  torch::Tensor weight;  // [out, in, k, k]
  torch::Tensor bias;

 private:
  int64_t stride_;
  std::shared_ptr<const LayerRule> rule_;
  EvalWeightCache eval_cache_;
};
TORCH_MODULE(SparseConv2d);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_
