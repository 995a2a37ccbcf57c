#include "worker/trainer/kernels/sdpa_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/trainer/kernels/fused_attention.h"

namespace nmsparse {
namespace {

// The ViT shapes of the fused-attention tests: micro ViT, ViT-S/16 at 224, single token, odd head sizes.
struct Case {
  int64_t batch, tokens, heads, head_dim;
};
const Case kCases[] = {{2, 50, 4, 16}, {1, 197, 6, 64}, {3, 1, 1, 8}, {1, 65, 3, 5}};

// In double precision the two compute the same function: agreement to 1e-10 leaves room only for rounding.
TEST(SdpaAttention, MatchesCompositeAttentionAndItsGradient) {
  if (!SdpaAvailable()) {
    GTEST_SKIP() << "LibTorch < 2.1 has no scaled_dot_product_attention: the models use the composite path "
                    "(tested in the LibTorch 2.x stage of tools/test.sh)";
  }
  for (const auto& c : kCases) {
    torch::manual_seed(c.tokens);
    auto qkv = (torch::randn({c.batch, c.tokens, 3 * c.heads * c.head_dim}, torch::kDouble) * 2.0)
                   .requires_grad_(true);
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
    auto weights = torch::randn({c.batch, c.tokens, c.heads * c.head_dim}, torch::kDouble);
    auto sdpa = SdpaAttention(qkv, c.heads, scale, 0.0);
    (sdpa * weights).sum().backward();
    const auto grad = qkv.grad().clone();
    qkv.mutable_grad().zero_();
    auto composite = CompositeAttention(qkv, c.heads, scale);
    (composite * weights).sum().backward();
    EXPECT_LT((sdpa - composite).abs().max().item<double>(), 1e-10) << "tokens " << c.tokens;
    EXPECT_LT((grad - qkv.grad()).abs().max().item<double>(), 1e-10) << "tokens " << c.tokens;
  }
}

TEST(SdpaAttention, DropoutDropsOnlyWhenAsked) {
  if (!SdpaAvailable()) GTEST_SKIP() << "LibTorch < 2.1 has no scaled_dot_product_attention";
  auto qkv = torch::randn({2, 10, 48});
  EXPECT_TRUE(
      torch::allclose(SdpaAttention(qkv, 4, 0.25, 0.0), CompositeAttention(qkv, 4, 0.25), 1e-5, 1e-6));
  torch::manual_seed(1);
  EXPECT_FALSE(
      torch::allclose(SdpaAttention(qkv, 4, 0.25, 0.5), CompositeAttention(qkv, 4, 0.25), 1e-3, 1e-3));
}

}  // namespace
}  // namespace nmsparse
