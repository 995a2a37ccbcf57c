// Bounds on float32 rounding error for the kernel tests: two runs that differ only in summation order (thread
// count, BLAS kernel, processor) may differ by at most twice the bound of either, never bit-for-bit. Standard
// first-order analysis (docs/testing.md, "Tolerances"): a sum of n products computed in any order has an
// absolute error of at most gamma(n) * sum |a_i b_i|, with gamma(n) = n u / (1 - n u) and u = 2^-24.
// Every bound here is computed in double from the inputs, never from the results being compared.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_ROUNDING_BOUNDS_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_ROUNDING_BOUNDS_H_

#include <torch/types.h>

#include <cstdint>

namespace nmsparse::rounding {

// float32's unit round-off.
constexpr double kUnitRoundoff = 1.0 / (1 << 24);

// gamma(n) = n u / (1 - n u).
double Gamma(int64_t n);

// Both error bounds of an attention pass (per element, double), for inputs qkv [B, T, 3 * H * D] with a
// float32 forward and backward: `out` bounds |computed - exact| of the output [B, T, H * D], `grad` of the
// qkv gradient when the output's gradient is `grad_out` (e.g. ones for out.sum()).
struct AttentionBounds {
  torch::Tensor out, grad;
};
AttentionBounds AttentionErrorBounds(const torch::Tensor& qkv, int64_t heads, double scale,
                                     const torch::Tensor& grad_out);

// Error bounds of fc2(GELU(fc1(x))) [.., out] and of fc1.weight's gradient when the output's gradient is
// `grad_out`. `gelu_abs_error` is the GELU kernel's own absolute error per unit of |input|.
struct MlpBounds {
  torch::Tensor out, grad_w1;
};
MlpBounds MlpErrorBounds(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                         const torch::Tensor& w2, const torch::Tensor& b2, const torch::Tensor& grad_out,
                         double gelu_abs_error);

}  // namespace nmsparse::rounding

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_ROUNDING_BOUNDS_H_
