#include "worker/trainer/kernels/fused_gelu.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/trainer/kernels/fused_kernels_switch.h"

namespace nmsparse {
namespace {

// Every float GELU sees in training lies well inside [-12, 12]; beyond, it is x or 0 to float precision.
torch::Tensor Inputs() {
  return torch::cat({torch::linspace(-12.0, 12.0, 200001), torch::randn({5000}) * 3.0,
                     torch::tensor({0.0f, -0.0f, 1e-8f, -1e-8f, 40.0f, -40.0f})});
}

TEST(FusedGelu, ForwardMatchesExactGeluInDoublePrecision) {
  auto x = Inputs();
  if (!FusedGeluApplies(x)) GTEST_SKIP() << "no AVX2 + FMA: Gelu is torch::gelu here";
  auto expected = torch::gelu(x.to(torch::kDouble));
  auto got = Gelu(x).to(torch::kDouble);
  auto error = (got - expected).abs() - 1e-6 * expected.abs();
  EXPECT_LT(error.max().item<double>(), 5e-7) << "at x = " << x[error.argmax()].item<float>();
}

TEST(FusedGelu, GradientMatchesExactGeluInDoublePrecision) {
  auto x = Inputs().requires_grad_(true);
  if (!FusedGeluApplies(x)) GTEST_SKIP() << "no AVX2 + FMA";
  auto weights = torch::randn({x.numel()});
  (Gelu(x) * weights).sum().backward();
  auto x64 = x.detach().to(torch::kDouble).requires_grad_(true);
  (torch::gelu(x64) * weights.to(torch::kDouble)).sum().backward();
  auto error = (x.grad().to(torch::kDouble) - x64.grad()).abs() - 1e-6 * x64.grad().abs();
  EXPECT_LT(error.max().item<double>(), 1e-6) << "at x = " << x[error.argmax()].item<float>();
}

TEST(FusedGelu, TailsShapesAndSpecialValues) {
  for (int64_t n : {1, 7, 8, 9, 17, 100}) {
    auto x = torch::randn({n});
    EXPECT_TRUE(torch::allclose(Gelu(x), torch::gelu(x), 1e-5, 1e-6)) << "n " << n;
  }
  auto matrix = torch::randn({6, 10});
  auto strided = matrix.t();  // non-contiguous input keeps its shape
  EXPECT_TRUE(torch::allclose(Gelu(strided), torch::gelu(strided), 1e-5, 1e-6));
  auto special = Gelu(torch::tensor({NAN, INFINITY}));
  EXPECT_TRUE(std::isnan(special[0].item<float>()));
  EXPECT_EQ(special[1].item<float>(), INFINITY);
}

TEST(FusedGelu, NoGradAndSwitchedOffPaths) {
  auto x = torch::randn({3, 50, 256}).requires_grad_(true);
  auto with_grad = Gelu(x);
  EXPECT_TRUE(with_grad.requires_grad());
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(Gelu(x), with_grad.detach()));
  }
  SetFusedKernelsEnabled(false);
  EXPECT_FALSE(FusedGeluApplies(x));
  EXPECT_TRUE(torch::equal(Gelu(x), torch::gelu(x)));
  SetFusedKernelsEnabled(true);
  EXPECT_FALSE(FusedGeluApplies(x.to(torch::kBFloat16)));
  EXPECT_FALSE(FusedGeluApplies(x.to(torch::kDouble)));
}

}  // namespace
}  // namespace nmsparse
