#include "worker/trainer/kernels/fused_attention.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/rounding_bounds_testing.h"

namespace nmsparse {
namespace {

struct Case {
  int64_t batch, tokens, heads, head_dim;
};

// The micro ViT (50 tokens, 4 heads of 16), ViT-S at 224 (197 tokens, 6 heads of 64), single-token and
// single-head edge cases, and head sizes that are not multiples of the vector width.
const Case kCases[] = {{2, 50, 4, 16}, {1, 197, 6, 64}, {3, 1, 1, 8}, {2, 17, 2, 12}, {1, 65, 3, 5}};

torch::Tensor RandomQkv(const Case& c, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn({c.batch, c.tokens, 3 * c.heads * c.head_dim}) * 2.0;
}

double Scale(const Case& c) { return 1.0 / std::sqrt(static_cast<double>(c.head_dim)); }

TEST(FusedAttention, ForwardMatchesCompositeInDoublePrecision) {
  for (const auto& c : kCases) {
    auto qkv = RandomQkv(c, 1);
    ASSERT_TRUE(FusedAttentionApplies(qkv, c.heads));
    auto fused = FusedAttention(qkv, c.heads, Scale(c));
    auto expected = CompositeAttention(qkv.to(torch::kDouble), c.heads, Scale(c));
    ASSERT_EQ(fused.sizes(), expected.sizes());
    EXPECT_TRUE(torch::allclose(fused.to(torch::kDouble), expected, 1e-5, 1e-5))
        << "tokens " << c.tokens << " heads " << c.heads << " max diff "
        << (fused.to(torch::kDouble) - expected).abs().max().item<double>();
  }
}

TEST(FusedAttention, GradientMatchesCompositeInDoublePrecision) {
  for (const auto& c : kCases) {
    auto qkv = RandomQkv(c, 2).requires_grad_(true);
    auto weights = torch::randn({c.batch, c.tokens, c.heads * c.head_dim});
    (FusedAttention(qkv, c.heads, Scale(c)) * weights).sum().backward();

    auto qkv64 = qkv.detach().to(torch::kDouble).requires_grad_(true);
    (CompositeAttention(qkv64, c.heads, Scale(c)) * weights.to(torch::kDouble)).sum().backward();
    auto diff = (qkv.grad().to(torch::kDouble) - qkv64.grad()).abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(qkv.grad().to(torch::kDouble), qkv64.grad(), 1e-4, 1e-5))
        << "tokens " << c.tokens << " heads " << c.heads << " max diff " << diff;
  }
}

TEST(FusedAttention, NonContiguousInputAndNoGradAgree) {
  const Case c{2, 50, 4, 16};
  auto qkv = RandomQkv(c, 3);
  auto strided = qkv.transpose(0, 1).contiguous().transpose(0, 1);  // same values, other strides
  ASSERT_FALSE(strided.is_contiguous());
  auto reference = FusedAttention(qkv, c.heads, Scale(c));
  EXPECT_TRUE(torch::equal(FusedAttention(strided, c.heads, Scale(c)), reference));
  torch::NoGradGuard no_grad;
  auto leaf = qkv.clone().requires_grad_(true);
  auto out = FusedAttention(leaf, c.heads, Scale(c));
  EXPECT_FALSE(out.requires_grad());
  EXPECT_TRUE(torch::equal(out, reference));
}

// Per-head products run on one thread each, but BLAS may split a product across its own threads: results
// may move by the summation-order rounding bound (rounding_bounds_testing.h), not more.
TEST(FusedAttention, ThreadCountDoesNotChangeTheResult) {
  const Case c{4, 50, 4, 16};
  auto qkv = RandomQkv(c, 4).requires_grad_(true);
  const int previous = at::get_num_threads();
  at::set_num_threads(1);
  auto one = FusedAttention(qkv, c.heads, Scale(c));
  one.sum().backward();
  auto grad_one = qkv.grad().clone();
  qkv.mutable_grad().zero_();
  at::set_num_threads(2);
  auto two = FusedAttention(qkv, c.heads, Scale(c));
  two.sum().backward();
  at::set_num_threads(previous);
  const auto bounds = rounding::AttentionErrorBounds(qkv, c.heads, Scale(c), torch::ones_like(one));
  EXPECT_TRUE(((one - two).abs().to(torch::kDouble) <= 2 * bounds.out).all().item<bool>())
      << "max diff " << (one - two).abs().max().item<double>();
  EXPECT_TRUE(((grad_one - qkv.grad()).abs().to(torch::kDouble) <= 2 * bounds.grad).all().item<bool>())
      << "max diff " << (grad_one - qkv.grad()).abs().max().item<double>();
}

// The bounds are not vacuous: the fused kernel's distance to the exact (double) result stays within them.
TEST(FusedAttention, ExactResultIsWithinTheRoundingBounds) {
  for (const auto& c : kCases) {
    auto qkv = RandomQkv(c, 5).requires_grad_(true);
    auto out = FusedAttention(qkv, c.heads, Scale(c));
    out.sum().backward();
    auto qkv64 = qkv.detach().to(torch::kDouble).requires_grad_(true);
    auto exact = CompositeAttention(qkv64, c.heads, Scale(c));
    exact.sum().backward();
    const auto bounds = rounding::AttentionErrorBounds(qkv, c.heads, Scale(c), torch::ones_like(out));
    EXPECT_TRUE(((out.to(torch::kDouble) - exact).abs() <= bounds.out).all().item<bool>()) << c.tokens;
    EXPECT_TRUE(((qkv.grad().to(torch::kDouble) - qkv64.grad()).abs() <= bounds.grad).all().item<bool>())
        << c.tokens;
    // And tight enough to catch a real fault, such as a dropped term or a wrong block.
    EXPECT_LT(bounds.out.max().item<double>(), 1e-3 * exact.abs().max().item<double>()) << c.tokens;
  }
}

TEST(FusedAttention, AppliesOnlyToFloatCpuInputItCanSplit) {
  auto qkv = torch::randn({2, 10, 48});
  EXPECT_TRUE(FusedAttentionApplies(qkv, 4));
  EXPECT_FALSE(FusedAttentionApplies(qkv, 5));  // 48 is not 3 * 5 * head_dim
  EXPECT_FALSE(FusedAttentionApplies(qkv.to(torch::kBFloat16), 4));
  EXPECT_FALSE(FusedAttentionApplies(qkv.to(torch::kDouble), 4));
  EXPECT_FALSE(FusedAttentionApplies(qkv[0], 4));
  SetFusedKernelsEnabled(false);
  EXPECT_FALSE(FusedAttentionApplies(qkv, 4));
  EXPECT_THROW(FusedAttention(qkv, 4, 0.5), c10::Error);
  SetFusedKernelsEnabled(true);
  EXPECT_TRUE(FusedAttentionApplies(qkv, 4));
}

}  // namespace
}  // namespace nmsparse
