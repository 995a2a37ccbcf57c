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

SparseLinearImpl::SparseLinearImpl(const SparseLinearOptions& options) : options(options) { reset(); }

void SparseLinearImpl::reset() {
  weight = register_parameter("weight", torch::empty({options.out_features(), options.in_features()}));
  bias =
      options.bias() ? register_parameter("bias", torch::empty({options.out_features()})) : torch::Tensor();
  ResetLikeTorch(weight, bias);
}

void SparseLinearImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "nmsparse::SparseLinear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features() << ", bias=" << options.bias() << ")";
}

torch::Tensor SparseLinearImpl::EffectiveWeight() { return ApplyLayerRule(weight, rule_.get()); }

torch::Tensor SparseLinearImpl::forward(const torch::Tensor& input) { return ForwardWithBias(input, bias); }

torch::Tensor SparseLinearImpl::ForwardWithBias(const torch::Tensor& input, const torch::Tensor& bias) {
  if (accelerator_ != nullptr) return accelerator_->Forward(input, weight, rule_.get(), bias);
  const torch::Tensor w = eval_cache_.Get(is_training(), weight, rule_, [this] { return EffectiveWeight(); });
  return torch::linear(input, w, bias);  // One fused op; F::linear is matmul + add in 1.13.
}

SparseConv2dImpl::SparseConv2dImpl(const SparseConv2dOptions& options) : options(options) { reset(); }

void SparseConv2dImpl::reset() {
  const int64_t k = options.kernel_size();
  weight = register_parameter("weight", torch::empty({options.out_channels(), options.in_channels(), k, k}));
  bias =
      options.bias() ? register_parameter("bias", torch::empty({options.out_channels()})) : torch::Tensor();
  ResetLikeTorch(weight, bias);
}

void SparseConv2dImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "nmsparse::SparseConv2d(" << options.in_channels() << ", "
         << options.out_channels() << ", kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", bias=" << options.bias() << ")";
}

torch::Tensor SparseConv2dImpl::EffectiveWeight() { return ApplyLayerRule(weight, rule_.get()); }

torch::Tensor SparseConv2dImpl::forward(const torch::Tensor& input) {
  const torch::Tensor w = eval_cache_.Get(is_training(), weight, rule_, [this] { return EffectiveWeight(); });
  return torch::conv2d(input, w, bias, {options.stride(), options.stride()});
}

}  // namespace nmsparse
