// ViT attention through ATen's scaled_dot_product_attention, which picks flash, memory-efficient or cuDNN
// attention on a GPU (LibTorch >= 2.1; compat::kHaveSdpa). It computes what CompositeAttention does:
// softmax(scale q k^T) v per head, dropout on the attention weights when training, from timm's interleaved
// qkv rows [B, N, 3 * C] to [B, N, C]. SwinV2's scaled-cosine attention with its position bias keeps its own
// path.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_SDPA_ATTENTION_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_SDPA_ATTENTION_H_

#include <torch/types.h>

#include <cstdint>

namespace nmsparse {

// True when this LibTorch has scaled_dot_product_attention with an explicit scale.
bool SdpaAvailable();

// Throws c10::Error when !SdpaAvailable().
torch::Tensor SdpaAttention(const torch::Tensor& qkv, int64_t num_heads, double scale, double dropout_p);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_SDPA_ATTENTION_H_
