// GELU in its exact (erf) form, as timm's Mlp uses it (nn.GELU()), with a vectorised CPU kernel for float32:
// one pass computes erf through Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, i.e. 1 ulp of
// 1 + erf) and the backward reuses the same exp(-x^2 / 2) for the Gaussian density. ATen 1.13's CPU gelu
// and gelu_backward cost 1.5 and 2.7 ns per element here, several times this kernel.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_GELU_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_GELU_H_

#include <torch/types.h>

namespace nmsparse {

// gelu(x) = x * Phi(x); the fused kernel on CPU float32 (when enabled and the CPU has AVX2 + FMA), else
// torch::gelu. Differentiable once.
torch::Tensor Gelu(const torch::Tensor& x);

// Whether Gelu(x) takes the fused kernel.
bool FusedGeluApplies(const torch::Tensor& x);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_GELU_H_
