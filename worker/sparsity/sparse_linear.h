// Linear and Conv2d layers whose weight the sparsity engine can mask. With no rule set (or a dense rule) they
// compute exactly what torch::nn::Linear / Conv2d compute, with the same parameter names (weight, bias), so
// models keep timm's names and a researcher can map every weight to the Python original.
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_

#include <torch/arg.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <memory>
#include <ostream>
#include <utility>

#include "worker/sparsity/eval_weight_cache.h"

namespace nmsparse {

struct LayerRule;         // Defined in worker/sparsity/layer_rule.h; set by SparsityEngine at every step.
class LinearAccelerator;  // worker/sparsity/semi_structured/linear_accelerator.h.

// SparseLinearImpl's arguments, as torch::nn::LinearOptions names them.
struct SparseLinearOptions {
  SparseLinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  TORCH_ARG(int64_t, in_features);
  TORCH_ARG(int64_t, out_features);
  TORCH_ARG(bool, bias) = true;
};

class SparseLinearImpl : public torch::nn::Cloneable<SparseLinearImpl> {
 public:
  SparseLinearImpl(int64_t in_features, int64_t out_features)
      : SparseLinearImpl(SparseLinearOptions(in_features, out_features)) {}
  explicit SparseLinearImpl(const SparseLinearOptions& options);
  // Registers the parameters and initialises them as torch::nn::Linear does (kaiming_uniform(a=sqrt(5))).
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
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

  SparseLinearOptions options;
  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out], undefined when bias = false

 private:
  std::shared_ptr<const LayerRule> rule_;
  std::shared_ptr<LinearAccelerator> accelerator_;
  EvalWeightCache eval_cache_;  // W~ across the batches of one evaluation.
};
TORCH_MODULE(SparseLinear);

// SparseConv2dImpl's arguments, as torch::nn::Conv2dOptions names them (square kernel and stride, no
// padding).
struct SparseConv2dOptions {
  SparseConv2dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, kernel_size);
  TORCH_ARG(int64_t, stride) = 1;
  TORCH_ARG(bool, bias) = true;
};

// A 2-D convolution (used for patch embeddings: kernel = stride = patch).
class SparseConv2dImpl : public torch::nn::Cloneable<SparseConv2dImpl> {
 public:
  explicit SparseConv2dImpl(const SparseConv2dOptions& options);
  // Registers the parameters and initialises them as torch::nn::Conv2d does.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  torch::Tensor forward(const torch::Tensor& input);
  torch::Tensor EffectiveWeight();
  void set_rule(std::shared_ptr<const LayerRule> rule) { rule_ = std::move(rule); }
  const std::shared_ptr<const LayerRule>& rule() const { return rule_; }

  SparseConv2dOptions options;
  torch::Tensor weight;  // [out, in, k, k]
  torch::Tensor bias;

 private:
  std::shared_ptr<const LayerRule> rule_;
  EvalWeightCache eval_cache_;
};
TORCH_MODULE(SparseConv2d);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSE_LINEAR_H_
