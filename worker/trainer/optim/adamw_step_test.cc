// The fused AdamW step against torch::optim::AdamW::step() on the CPU, where this LibTorch has the fused
// kernel (2.4+: the CMake build's tests); skips on older LibTorch (the Bazel build's 1.13).
#include "worker/trainer/optim/adamw_step.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "worker/compat/torch_compat.h"

namespace nmsparse {
namespace {

struct TwoGroups {
  std::vector<torch::Tensor> params;
  std::unique_ptr<torch::optim::AdamW> optimizer;
};

// A decaying [64, 32] weight and a non-decaying [64] bias, as MakeAdamW groups a layer.
TwoGroups Make(const torch::Tensor& w, const torch::Tensor& b) {
  TwoGroups t;
  t.params = {w.clone().requires_grad_(true), b.clone().requires_grad_(true)};
  auto options = torch::optim::AdamWOptions(1e-2).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.05);
  auto no_decay = std::make_unique<torch::optim::AdamWOptions>(options);
  no_decay->weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{t.params[0]},
                      std::make_unique<torch::optim::AdamWOptions>(options));
  groups.emplace_back(std::vector<torch::Tensor>{t.params[1]}, std::move(no_decay));
  t.optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups), options);
  return t;
}

TEST(AdamWStepTest, FusedMatchesThePlainOptimizerWithinRounding) {
  if (!compat::kHaveFusedAdamW) GTEST_SKIP() << "this LibTorch has no fused AdamW (2.4+)";
  torch::manual_seed(3);
  const torch::Tensor w = torch::randn({64, 32}), b = torch::randn({64});
  TwoGroups plain = Make(w, b), fused = Make(w, b);
  AdamWStep plain_step(*plain.optimizer, /*fused=*/false), fused_step(*fused.optimizer, /*fused=*/true);
  ASSERT_TRUE(fused_step.fused());
  const double lr = 1e-2, u = std::ldexp(1.0, -24);
  const int steps = 6;
  double max_update = 0.0;  // Largest |update| / lr of the plain run: bounds the terms that round.
  for (int k = 0; k < steps; ++k) {
    for (size_t i = 0; i < 2; ++i) {
      const torch::Tensor g = torch::randn_like(i == 0 ? w : b);
      plain.params[i].mutable_grad() = g.clone();
      fused.params[i].mutable_grad() = g.clone();
    }
    const torch::Tensor before = plain.params[0].detach().clone();
    plain_step(torch::Tensor());
    fused_step(torch::Tensor());
    max_update = std::max(
        max_update, (plain.params[0].detach() - before * (1 - lr * 0.05)).abs().max().item<double>() / lr);
  }
  // Each step rounds a handful of times in each implementation, in different orders: per step at most a few
  // units of rounding of |p| (the decay and the subtraction) and of the update (moments, roots, division).
  for (size_t i = 0; i < 2; ++i) {
    const torch::Tensor p = plain.params[i].detach(), q = fused.params[i].detach();
    const double bound = steps * (4 * u * p.abs().max().item<double>() + 32 * u * lr * max_update);
    EXPECT_LE((p - q).abs().max().item<double>(), bound) << "parameter " << i;
    EXPECT_LT(bound, 1e-3 * lr) << "the bound must be far below one step's update";
    const auto key = compat::OptimizerStateKey(fused.params[i]);
    EXPECT_EQ(static_cast<torch::optim::AdamWParamState&>(*fused.optimizer->state().at(key)).step(), steps)
        << "the host step count a checkpoint stores";
  }
}

TEST(AdamWStepTest, UnfusedIsTheOptimizersOwnStep) {
  torch::manual_seed(4);
  const torch::Tensor w = torch::randn({8, 4}), b = torch::randn({8});
  TwoGroups a = Make(w, b), c = Make(w, b);
  AdamWStep step(*a.optimizer, /*fused=*/false);
  for (size_t i = 0; i < 2; ++i) {
    const torch::Tensor g = torch::randn_like(i == 0 ? w : b);
    a.params[i].mutable_grad() = g.clone();
    c.params[i].mutable_grad() = g.clone();
  }
  step(torch::Tensor());  // No loss scaler: no found-inf flag.
  c.optimizer->step();
  EXPECT_TRUE(torch::equal(a.params[0], c.params[0]));
  EXPECT_TRUE(torch::equal(a.params[1], c.params[1]));
}

}  // namespace
}  // namespace nmsparse
