#include "worker/sparsity/sparse_linear.h"

#include <torch/nn/functional/conv.h>
#include <torch/nn/init.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {
namespace {

// torch::nn::Linear / Conv2d's default initialisation (kaiming_uniform(a=sqrt(5)) and a fan-in bias bound),
// so that a dense model built from these layers starts like one built from the stock layers.
void ResetLikeTorch(torch::Tensor& weight, torch::Tensor& bias) {
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = weight.numel() / weight.size(0);
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    torch::nn::init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

SparseLinearImpl::SparseLinearImpl(int64_t in_features, int64_t out_features, bool bias) {
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  if (bias) this->bias = register_parameter("bias", torch::empty({out_features}));
  ResetLikeTorch(weight, this->bias);
}

torch::Tensor SparseLinearImpl::EffectiveWeight() { return ApplyLayerRule(weight, rule_.get()); }

torch::Tensor SparseLinearImpl::forward(const torch::Tensor& input) { return ForwardWithBias(input, bias); }

torch::Tensor SparseLinearImpl::ForwardWithBias(const torch::Tensor& input, const torch::Tensor& bias) {
  if (accelerator_ != nullptr) return accelerator_->Forward(input, weight, rule_.get(), bias);
  const torch::Tensor w = eval_cache_.Get(is_training(), weight, rule_, [this] { return EffectiveWeight(); });
  return torch::linear(input, w, bias);  // One fused op; F::linear is matmul + add in 1.13.
}

SparseConv2dImpl::SparseConv2dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                   int64_t stride, bool bias)
    : stride_(stride) {
  weight = register_parameter("weight", torch::empty({out_channels, in_channels, kernel_size, kernel_size}));
  if (bias) this->bias = register_parameter("bias", torch::empty({out_channels}));
  ResetLikeTorch(weight, this->bias);
}

torch::Tensor SparseConv2dImpl::EffectiveWeight() { return ApplyLayerRule(weight, rule_.get()); }

torch::Tensor SparseConv2dImpl::forward(const torch::Tensor& input) {
  const torch::Tensor w = eval_cache_.Get(is_training(), weight, rule_, [this] { return EffectiveWeight(); });
  return torch::conv2d(input, w, bias, {stride_, stride_});
}

}  // namespace nmsparse
