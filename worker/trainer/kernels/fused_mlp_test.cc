#include "worker/trainer/kernels/fused_mlp.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/rounding_bounds_testing.h"

namespace nmsparse {
namespace {

// The vectorised GELU's absolute error per unit of input: |x| / 2 times its erf's 1.5e-7 (gelu_rows.h).
constexpr double kGeluKernelAbsError = 0.75e-7;

struct Case {
  std::vector<int64_t> input_shape;
  int64_t hidden, out;
};

// The micro ViT's Mlp (6,400 tokens of 64, hidden 256: six 1,024-row blocks and a partial one), odd sizes
// with vector tails, 2,364 tokens (blocks of 1,024, 1,024 and 316) and a 2-D input.
const Case kCases[] = {
    {{128, 50, 64}, 256, 64}, {{3, 7, 24}, 40, 12}, {{12, 197, 32}, 96, 32}, {{5, 9}, 8, 3}};

struct Params {
  torch::Tensor x, w1, b1, w2, b2;
  std::vector<torch::Tensor> All() const { return {x, w1, b1, w2, b2}; }
};

Params RandomParams(const Case& c, torch::ScalarType dtype = torch::kFloat) {
  torch::manual_seed(c.hidden);
  const int64_t in = c.input_shape.back();
  Params p{torch::randn(c.input_shape), torch::randn({c.hidden, in}) * 0.3, torch::randn({c.hidden}) * 0.5,
           torch::randn({c.out, c.hidden}) * 0.3, torch::randn({c.out}) * 0.5};
  for (auto* t : {&p.x, &p.w1, &p.b1, &p.w2, &p.b2}) *t = t->to(dtype).requires_grad_(true);
  return p;
}

torch::Tensor CompositeMlp(const Params& p) {
  return torch::linear(torch::gelu(torch::linear(p.x, p.w1, p.b1)), p.w2, p.b2);
}

// Output and every gradient against ATen's ops in double precision.
TEST(FusedMlp, MatchesCompositeOpsInDoublePrecision) {
  for (const auto& c : kCases) {
    auto p = RandomParams(c);
    ASSERT_TRUE(FusedMlpApplies(p.x, p.w1, p.b1, p.w2, p.b2));
    auto out = FusedMlp(p.x, p.w1, p.b1, p.w2, p.b2);
    auto weights = torch::randn(out.sizes());
    (out * weights).sum().backward();

    auto ref = RandomParams(c, torch::kDouble);
    auto expected = CompositeMlp(ref);
    (expected * weights.to(torch::kDouble)).sum().backward();
    ASSERT_EQ(out.sizes(), expected.sizes());
    const auto bounds = rounding::MlpErrorBounds(p.x, p.w1, p.b1, p.w2, p.b2, weights, kGeluKernelAbsError);
    EXPECT_TRUE(((out.to(torch::kDouble) - expected).abs() <= bounds.out).all().item<bool>())
        << "shape " << p.x.sizes() << ": outside the rounding bound";
    EXPECT_TRUE(torch::allclose(out.to(torch::kDouble), expected, 1e-4, 1e-5))
        << "shape " << p.x.sizes() << " max diff "
        << (out.to(torch::kDouble) - expected).abs().max().item<double>();
    const char* names[] = {"x", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    const auto got = p.All(), want = ref.All();
    for (size_t i = 0; i < got.size(); ++i) {
      const auto g = got[i].grad().to(torch::kDouble), w = want[i].grad();
      const double tolerance = 1e-5 * w.abs().max().item<double>() + 1e-6;
      EXPECT_LE((g - w).abs().max().item<double>(), tolerance) << "shape " << p.x.sizes() << " " << names[i];
    }
  }
}

// The thread count changes how rows are split into blocks and how BLAS sums: results may move by the
// summation-order rounding bound (rounding_bounds_testing.h), which a wrong block or a lost row would exceed
// by far.
TEST(FusedMlp, ThreadsAndNoGradGiveTheSameResults) {
  const Case c{{32, 50, 64}, 256, 64};  // 1,600 rows: two blocks, one per thread
  auto p = RandomParams(c);
  const int previous = at::get_num_threads();
  at::set_num_threads(1);
  auto one = FusedMlp(p.x, p.w1, p.b1, p.w2, p.b2);
  one.sum().backward();
  auto grad_one = p.w1.grad().clone();
  p.w1.mutable_grad().zero_();
  at::set_num_threads(2);
  auto two = FusedMlp(p.x, p.w1, p.b1, p.w2, p.b2);
  two.sum().backward();
  at::set_num_threads(previous);
  const auto bounds =
      rounding::MlpErrorBounds(p.x, p.w1, p.b1, p.w2, p.b2, torch::ones_like(one), kGeluKernelAbsError);
  EXPECT_TRUE(((one - two).abs().to(torch::kDouble) <= 2 * bounds.out).all().item<bool>())
      << "max diff " << (one - two).abs().max().item<double>() << ", bound "
      << bounds.out.max().item<double>();
  EXPECT_TRUE(((grad_one - p.w1.grad()).abs().to(torch::kDouble) <= 2 * bounds.grad_w1).all().item<bool>())
      << "max diff " << (grad_one - p.w1.grad()).abs().max().item<double>();
  // The no-grad path runs the same forward kernel at the same thread count: the same arithmetic.
  torch::NoGradGuard no_grad;
  at::set_num_threads(2);
  auto inference = FusedMlp(p.x, p.w1, p.b1, p.w2, p.b2);
  at::set_num_threads(previous);
  EXPECT_FALSE(inference.requires_grad());
  EXPECT_TRUE(torch::equal(inference, two.detach()));
}

TEST(FusedMlp, AppliesOnlyWhereItComputesTheSameThing) {
  auto p = RandomParams({{2, 5, 8}, 16, 8});
  EXPECT_TRUE(FusedMlpApplies(p.x, p.w1, p.b1, p.w2, p.b2));
  EXPECT_FALSE(FusedMlpApplies(p.x, p.w1, torch::Tensor(), p.w2, p.b2));            // no fc1 bias
  EXPECT_FALSE(FusedMlpApplies(p.x.to(torch::kBFloat16), p.w1, p.b1, p.w2, p.b2));  // bf16 input
  EXPECT_FALSE(FusedMlpApplies(p.x, p.w2, p.b1, p.w2, p.b2));  // fc1 [8, 16] vs x [.., 8]
  const bool autocast = compat::IsAutocastEnabled(at::kCPU);
  compat::SetAutocastEnabled(at::kCPU, true);  // products must run in bf16 there: ATen's ops under autocast
  EXPECT_FALSE(FusedMlpApplies(p.x, p.w1, p.b1, p.w2, p.b2));
  compat::SetAutocastEnabled(at::kCPU, autocast);
  SetFusedKernelsEnabled(false);
  EXPECT_FALSE(FusedMlpApplies(p.x, p.w1, p.b1, p.w2, p.b2));
  EXPECT_THROW(FusedMlp(p.x, p.w1, p.b1, p.w2, p.b2), c10::Error);
  SetFusedKernelsEnabled(true);
}

}  // namespace
}  // namespace nmsparse
