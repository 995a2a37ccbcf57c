// GELU in its exact (erf) form, as timm's Mlp uses it (nn.GELU()), as an autograd op over the vectorised loops
// of gelu_rows.h for CPU float32 tensors. Used where the fused Mlp does not apply (dropout); on the ViT-S
// hidden size it is about 3x ATen 1.13's gelu + gelu_backward here (docs/benchmarks.md).
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
