#include "worker/sparsity/mvue_linear.h"

#include <torch/torch.h>

#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class MvueLinearFunction : public torch::autograd::Function<MvueLinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input, const torch::Tensor& weight,
                               const torch::Tensor& bias, torch::Generator generator) {
    ctx->save_for_backward({input, weight});
    ctx->saved_data["has_bias"] = bias.defined();
    ctx->saved_data["generator"] = generator;
    return torch::linear(input, weight, bias);
  }

  static variable_list backward(AutogradContext* ctx, const variable_list& grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& input = saved[0];
    const torch::Tensor& weight = saved[1];
    // Under autocast dY and X may be bf16: the backward GEMMs run in the weight's dtype.
    const torch::Tensor dy =
        grad_outputs[0].reshape({-1, weight.size(0)}).to(weight.scalar_type());            // [tokens, out]
    const torch::Tensor x = input.reshape({-1, weight.size(1)}).to(weight.scalar_type());  // [tokens, in]
    const torch::Tensor dx = dy.matmul(weight).view(input.sizes()).to(input.scalar_type());
    const torch::Tensor dw =
        MvueWeightGradient(dy, x, ctx->saved_data["generator"].toGenerator()).to(weight.scalar_type());
    const torch::Tensor db = ctx->saved_data["has_bias"].toBool() ? dy.sum(0) : torch::Tensor();
    return {dx, dw, db, torch::Tensor()};
  }
};

class StraightThroughFunction : public torch::autograd::Function<StraightThroughFunction> {
 public:
  static torch::Tensor forward(AutogradContext* /*ctx*/, const torch::Tensor& /*weight*/,
                               const torch::Tensor& effective) {
    return effective;
  }
  static variable_list backward(AutogradContext* /*ctx*/, const variable_list& grad_outputs) {
    return {grad_outputs[0], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor MvueLinear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias,
                         torch::Generator generator) {
  return MvueLinearFunction::apply(input, weight, bias, std::move(generator));
}

torch::Tensor StraightThrough(const torch::Tensor& weight, const torch::Tensor& effective) {
  return StraightThroughFunction::apply(weight, effective.detach());
}

}  // namespace nmsparse
