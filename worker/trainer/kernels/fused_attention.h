// Multi-head self-attention on CPU as one fused kernel, forward and backward, from the qkv projection's
// output to the heads' concatenated output (timm's Attention between `qkv` and `proj`):
//
//   q, k, v = qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4)
//   out     = softmax(q * scale @ k^T) @ v, transposed back to [B, N, H * D]
//
// For each (batch, head) the kernel reads q, k and v in place from the qkv rows, keeps the [N, N] scores in
// cache through the softmax, and writes its output (and in backward, its dq, dk, dv) straight into the
// interleaved layout: no permute copies, one BLAS call per product instead of ATen's per-batch addmm, and a
// vectorised softmax. Autograd saves qkv and the attention probabilities, as ATen's composite path does.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_ATTENTION_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_ATTENTION_H_

#include <torch/types.h>

#include <functional>

namespace nmsparse {

// Whether FusedAttention can take this qkv: a float32 CPU tensor [B, N, 3 * H * D], a BLAS in the build,
// and the fused kernels not switched off (fused_kernels_switch.h). CUDA tensors and bf16 (autocast) take
// ATen's path in the model.
bool FusedAttentionApplies(const torch::Tensor& qkv, int64_t num_heads);

// [B, N, 3 * H * D] -> [B, N, H * D]; differentiable once with respect to qkv. No attention dropout: callers
// with a non-zero attn_drop in training use the composite path.
torch::Tensor FusedAttention(const torch::Tensor& qkv, int64_t num_heads, double scale);

// The composite ATen formulation above (the model's path on CUDA and under autocast), for tests and the
// benchmark's baseline. `attn_dropout` is applied to the probabilities when given.
torch::Tensor CompositeAttention(const torch::Tensor& qkv, int64_t num_heads, double scale,
                                 const std::function<torch::Tensor(const torch::Tensor&)>& attn_dropout = {});

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_ATTENTION_H_
