#include "worker/trainer/kernels/sdpa_attention.h"

#include <torch/torch.h>

#include "worker/compat/torch_compat.h"

namespace nmsparse {

bool SdpaAvailable() { return compat::kHaveSdpa; }

torch::Tensor SdpaAttention(const torch::Tensor& qkv, int64_t num_heads, double scale, double dropout_p) {
#if NMSPARSE_TORCH_AT_LEAST(2, 1)
  const int64_t b = qkv.size(0), n = qkv.size(1), c = qkv.size(2) / 3;
  auto heads = qkv.reshape({b, n, 3, num_heads, c / num_heads}).permute({2, 0, 3, 1, 4}).unbind(0);
  auto out = at::scaled_dot_product_attention(heads[0], heads[1], heads[2], /*attn_mask=*/{}, dropout_p,
                                              /*is_causal=*/false, scale);
  return out.transpose(1, 2).reshape({b, n, c});
#else
  (void)qkv, (void)num_heads, (void)scale, (void)dropout_p;
  TORCH_CHECK(false, "scaled_dot_product_attention needs LibTorch 2.1 or later");
#endif
}

}  // namespace nmsparse
