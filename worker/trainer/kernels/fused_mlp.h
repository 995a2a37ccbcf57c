// timm's Mlp (fc1 -> GELU -> fc2, no dropout) on CPU in float32 as one autograd node. It walks the tokens in
// row blocks: forward, fc1's output gets its bias and GELU in one pass over the block (instead of ATen's bias
// copy into the output, addmm, and a separate gelu over the whole [tokens, hidden] tensor); backward, the
// hidden gradient is formed, multiplied by GELU' and summed into fc1's bias gradient block by block (one pass,
// no separate gelu_backward and bias sum), and never exists at full size. The
// arithmetic is the same (BLAS products, GELU from gelu_rows.h); the saved tensors are the ones ATen keeps
// (input, fc1 output, GELU output). Weight gradients accumulate block by block (beta = 1), so they may differ
// from ATen's in the last bits, and with several threads each thread sums its blocks before a final add.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_MLP_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_MLP_H_

#include <torch/types.h>

namespace nmsparse {

// Whether FusedMlp takes these: float32 CPU tensors, x [..., in], fc1 [hidden, in] + [hidden], fc2
// [out, hidden] + [out], biases present, the CPU vectorised, a BLAS in the build, CPU autocast off (under
// bf16 autocast the products must run in bf16), and the fused kernels switched on (fused_kernels_switch.h).
bool FusedMlpApplies(const torch::Tensor& x, const torch::Tensor& fc1_weight, const torch::Tensor& fc1_bias,
                     const torch::Tensor& fc2_weight, const torch::Tensor& fc2_bias);

// fc2(gelu(fc1(x))): [..., in] -> [..., out]; differentiable once with respect to every argument (the weights
// may be the sparsity engine's masked weights: their autograd functions receive the gradients).
torch::Tensor FusedMlp(const torch::Tensor& x, const torch::Tensor& fc1_weight, const torch::Tensor& fc1_bias,
                       const torch::Tensor& fc2_weight, const torch::Tensor& fc2_bias);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_MLP_H_
