// The diagnostics on one 2x8 layer at 2:4 whose mask and gradient are set by hand (exact values).
#include "worker/sparsity/sparsity_diagnostics.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

void Set(torch::Tensor& weight, std::vector<float> values) {
  torch::NoGradGuard no_grad;
  weight.copy_(torch::tensor(values).view({2, 8}));
}

TEST(SparsityDiagnosticsTest, FlipsAndGradientNormsOfAKnownMaskChange) {
  torch::nn::Module model;
  auto mlp = model.register_module("mlp", std::make_shared<torch::nn::Module>());
  auto fc = mlp->register_module("fc1", SparseLinear(8, 2));
  auto rule = std::make_shared<LayerRule>();
  SparsityDiagnostics diagnostics(model);
  // Before the engine gives it a sparse rule the layer is not observed.
  fc->weight.mutable_grad() = torch::ones({2, 8});
  diagnostics.Observe(1);
  EXPECT_TRUE(diagnostics.Read(1).empty());

  rule->recipe = Recipe::kDecay;  // STE: hard 2:4 mask, gradient straight through.
  rule->blocks = {BlockRule{true, NM{2, 4}}};
  fc->set_rule(rule);
  // Kept (2 largest |w| per group of 4, ties to the lower index): flat positions 0, 1, 6, 7, 8, 9, 14, 15.
  Set(fc->weight, {4, 3, 2, 1, 1, 2, 3, 4, 1, 1, 1, 1, 0, 0, 5, 6});
  fc->weight.mutable_grad() = torch::arange(1, 17, torch::kFloat).view({2, 8});  // dL/dW = 1 .. 16.
  diagnostics.Observe(2);
  std::vector<LayerDiagnostics> first = diagnostics.Read(2);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "mlp.fc1");
  EXPECT_EQ(first[0].kind, "ff");
  EXPECT_EQ(first[0].numel, 16);
  EXPECT_EQ(first[0].flipped, -1.0) << "no previous mask";
  // Kept: 1 + 4 + 49 + 64 + 81 + 100 + 225 + 256 = 780; all: 1^2 + ... + 16^2 = 1496; pruned: 716.
  EXPECT_EQ(first[0].kept_grad_sq, 780.0);
  EXPECT_EQ(first[0].pruned_grad_sq, 716.0);
  EXPECT_EQ(diagnostics.Read(2).size(), 1u) << "a step line and an epoch line at the same step";
  EXPECT_TRUE(diagnostics.Read(3).empty()) << "nothing observed for step 3";
  EXPECT_EQ(diagnostics.KeptBytes(), 16);

  // Row 0's first group reversed: positions 0, 1 leave the mask and 2, 3 join it: 4 flips of 16.
  Set(fc->weight, {1, 2, 3, 4, 1, 2, 3, 4, 1, 1, 1, 1, 0, 0, 5, 6});
  fc->weight.mutable_grad() = torch::ones({2, 8});
  diagnostics.Observe(3);
  std::vector<LayerDiagnostics> second = diagnostics.Read(3);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].flipped, 4.0);
  EXPECT_EQ(second[0].kept_grad_sq, 8.0);
  EXPECT_EQ(second[0].pruned_grad_sq, 8.0);
}

}  // namespace
}  // namespace nmsparse
