#include "worker/trainer/kernels/fused_gelu.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/gelu_rows.h"

namespace nmsparse {
namespace {

constexpr int64_t kGrain = 16384;  // elements per parallel task: large enough to amortise the dispatch

torch::Tensor ForwardKernel(const torch::Tensor& x) {
  auto y = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain,
                   [&](int64_t begin, int64_t end) { GeluForward(src + begin, dst + begin, end - begin); });
  return y;
}

torch::Tensor BackwardKernel(const torch::Tensor& x, const torch::Tensor& grad) {
  auto out = torch::empty_like(x);
  const float* src = x.data_ptr<float>();
  const float* g = grad.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain, [&](int64_t begin, int64_t end) {
    GeluBackward(src + begin, g + begin, dst + begin, end - begin);
  });
  return out;
}

class FusedGeluFunction : public torch::autograd::Function<FusedGeluFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    ctx->save_for_backward({x});
    return ForwardKernel(x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    return {BackwardKernel(ctx->get_saved_variables()[0], grad_outputs[0].contiguous())};
  }
};

}  // namespace

bool FusedGeluApplies(const torch::Tensor& x) {
  return FusedKernelsEnabled() && GeluRowsVectorised() && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat;
}

torch::Tensor Gelu(const torch::Tensor& x) {
  if (!FusedGeluApplies(x)) return torch::gelu(x);
  auto input = x.contiguous();
  if (!(torch::GradMode::is_enabled() && input.requires_grad())) return ForwardKernel(input);
  return FusedGeluFunction::apply(input);
}

}  // namespace nmsparse
