// Gradients and forward values of each recipe (docs/sparsity-method.md §2), fused qkv blocks, and the sparse
// layers.
#include "worker/sparsity/sparse_functions.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/sparsity/decay.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

LayerRule Rule(Recipe recipe, NM nm, float decay = 0.f) {
  LayerRule rule;
  rule.recipe = recipe;
  rule.decay = decay;
  rule.blocks = {BlockRule{true, nm}};
  return rule;
}

// dL/dW for loss = sum(W~ * g).
torch::Tensor WeightGrad(const torch::Tensor& w0, const LayerRule& rule, const torch::Tensor& g) {
  torch::Tensor w = w0.clone().requires_grad_(true);
  ApplyLayerRule(w, &rule).backward(g);
  return w.grad();
}

TEST(SparseFunctionsTest, SteAndMdgfPassTheGradientStraightThrough) {
  torch::manual_seed(1);
  const torch::Tensor w = torch::randn({16, 32});
  const torch::Tensor g = torch::randn({16, 32});
  for (float decay : {0.f, 0.3f, 1.f}) {
    EXPECT_TRUE(torch::equal(WeightGrad(w, Rule(Recipe::kDecay, {1, 8}, decay), g), g)) << decay;
  }
  const torch::Tensor mask = NMMask(w, {1, 8}, SparseDim::kRow, false);
  EXPECT_GT(mask.eq(0).sum().item<int64_t>(), 0);  // Pruned positions exist and still get g.
}

TEST(SparseFunctionsTest, SrsteAddsTheDecayTermAtPrunedPositionsOnly) {
  torch::manual_seed(2);
  const torch::Tensor w = torch::randn({16, 32});
  const torch::Tensor g = torch::randn({16, 32});
  LayerRule rule = Rule(Recipe::kSrste, {2, 4});
  rule.srste_lambda = 0.5;  // Large, so that a missing or misplaced term is obvious.
  const torch::Tensor grad = WeightGrad(w, rule, g);
  const torch::Tensor mask = NMMask(w, {2, 4}, SparseDim::kRow, false);
  EXPECT_TRUE(torch::equal(grad.masked_select(mask.eq(1)), g.masked_select(mask.eq(1))));
  const torch::Tensor want = g + (0.5 * (1 - mask)) * w;
  EXPECT_TRUE(torch::equal(grad, want));
  // The forward is the hard-masked weight.
  EXPECT_TRUE(torch::equal(ApplyLayerRule(w, &rule), w * mask));
}

TEST(SparseFunctionsTest, SrsteAddsTheDecayTermAtPrunedPositions) {
  // 2:4 of [4, 3, -2, 1] keeps 4 and 3; with lambda = 0.5 the pruned positions get g + 0.5 * W.
  torch::Tensor w = torch::tensor({4.f, 3.f, -2.f, 1.f}).view({1, 4}).requires_grad_(true);
  LayerRule rule = Rule(Recipe::kSrste, {2, 4});
  rule.srste_lambda = 0.5;
  torch::Tensor out = ApplyLayerRule(w, &rule);
  EXPECT_TRUE(torch::equal(out, torch::tensor({4.f, 3.f, 0.f, 0.f}).view({1, 4})));
  out.sum().backward();
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({1.f, 1.f, 0.f, 1.5f}).view({1, 4})));
}

TEST(SparseFunctionsTest, SrsteWithAGivenMaskUsesThatMask) {
  // A mask made elsewhere (semi_structured's transposable one), deliberately not W's 2:4 magnitude mask.
  torch::Tensor w = torch::tensor({4.f, 3.f, 2.f, 1.f}).view({1, 4}).requires_grad_(true);
  const torch::Tensor mask = torch::tensor({0.f, 1.f, 0.f, 1.f}).view({1, 4});
  torch::Tensor out = SrsteSparseWeight(w, mask, 1.0);
  EXPECT_TRUE(torch::equal(out, torch::tensor({0.f, 3.f, 0.f, 1.f}).view({1, 4})));
  out.sum().backward();
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({5.f, 1.f, 3.f, 1.f}).view({1, 4})));
}

TEST(SparseFunctionsTest, SparseWeightOfIsTheWeightTimesTheLayerMask) {
  torch::manual_seed(5);
  const torch::Tensor w = torch::randn({24, 16});
  LayerRule rule = Rule(Recipe::kDecay, {2, 4}, 0.25f);
  rule.blocks = {BlockRule{true, {2, 4}}, BlockRule{false, {2, 4}}, BlockRule{true, {1, 8}}};
  for (SparseDim dim : {SparseDim::kRow, SparseDim::kCol}) {
    rule.sparse_dim = dim;
    for (float pruned : {0.f, 0.25f}) {
      EXPECT_TRUE(torch::equal(SparseWeightOf(w, rule, pruned), w * LayerMask(w, rule, pruned)));
    }
  }
}

TEST(SparseFunctionsTest, DecayedForwardValues) {
  torch::manual_seed(3);
  const torch::Tensor w = torch::randn({8, 16});
  const torch::Tensor mask = NMMask(w, {1, 4}, SparseDim::kRow, false);
  for (auto [type, beta, j] : {std::tuple{DecayType::kLinear, 2e-4, 100.0},
                               {DecayType::kLinear, 1e-4, 9999.5},
                               {DecayType::kLinear, 2e-4, 6000.0},
                               {DecayType::kExp, 2e-4, 2500.5},
                               {DecayType::kExp, 1e-4, 0.0}}) {
    const float d = static_cast<float>(DecayValue(type, beta, j));
    const LayerRule rule = Rule(Recipe::kDecay, {1, 4}, d);
    const torch::Tensor out = ApplyLayerRule(w, &rule);
    EXPECT_TRUE(torch::equal(out.masked_select(mask.eq(1)), w.masked_select(mask.eq(1))));
    EXPECT_TRUE(torch::equal(out.masked_select(mask.eq(0)), w.masked_select(mask.eq(0)) * d));
  }
}

TEST(SparseFunctionsTest, DecayIsComputedInDouble) {
  EXPECT_EQ(DecayValue(DecayType::kStep, 2e-4, 123), 0.0);
  EXPECT_EQ(DecayValue(DecayType::kLinear, 2e-4, 100), 1.0 - 2e-4 * 100);
  EXPECT_EQ(DecayValue(DecayType::kLinear, 2e-4, 6000), 0.0);  // Clamped at 0.
  EXPECT_EQ(DecayValue(DecayType::kExp, 2e-4, 2500.5), std::exp(-2e-4 * 2500.5));
  // Near full cancellation the double value, rounded once, differs from a float computation.
  const double d = DecayValue(DecayType::kLinear, 1e-4, 9999.5);
  EXPECT_NEAR(d, 5e-5, 1e-15);
  const float in_float = 1.f - 1e-4f * 9999.5f;
  EXPECT_GT(std::fabs(in_float - static_cast<float>(d)) / d, 1e-6);
}

TEST(SparseFunctionsTest, FusedQkvIsMaskedPerBlock) {
  torch::manual_seed(4);
  const int64_t dim = 16;
  const torch::Tensor w = torch::randn({3 * dim, dim});
  LayerRule rule;
  rule.recipe = Recipe::kDecay;
  rule.blocks = {BlockRule{true, {2, 4}}, BlockRule{true, {1, 8}}, BlockRule{false, {2, 4}}};
  const torch::Tensor out = ApplyLayerRule(w, &rule);
  const torch::Tensor q = w.narrow(0, 0, dim), k = w.narrow(0, dim, dim), v = w.narrow(0, 2 * dim, dim);
  EXPECT_TRUE(torch::equal(out.narrow(0, 0, dim), q * NMMask(q, {2, 4}, SparseDim::kRow, false)));
  EXPECT_TRUE(torch::equal(out.narrow(0, dim, dim), k * NMMask(k, {1, 8}, SparseDim::kRow, false)));
  EXPECT_TRUE(torch::equal(out.narrow(0, 2 * dim, dim), v));
  // A block's mask differs from the one of the fused weight when groups would cross blocks, so check the
  // column layout too: there groups run along the output rows of each block only.
  rule.sparse_dim = SparseDim::kCol;
  const torch::Tensor col = ApplyLayerRule(w, &rule);
  EXPECT_TRUE(torch::equal(col.narrow(0, 0, dim), q * NMMask(q, {2, 4}, SparseDim::kCol, false)));
  EXPECT_TRUE(torch::equal(col.narrow(0, dim, dim), k * NMMask(k, {1, 8}, SparseDim::kCol, false)));
  EXPECT_TRUE(torch::equal(col.narrow(0, 2 * dim, dim), v));
}

TEST(SparseLinearTest, DenseWithoutRuleAndTimmParameterNames) {
  torch::manual_seed(5);
  SparseLinear layer(12, 8);
  const auto params = layer->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params.contains("weight"));
  EXPECT_TRUE(params.contains("bias"));
  EXPECT_EQ(layer->weight.sizes(), (std::vector<int64_t>{8, 12}));
  const torch::Tensor x = torch::randn({3, 5, 12});
  EXPECT_TRUE(torch::allclose(layer(x), torch::matmul(x, layer->weight.t()) + layer->bias));
  EXPECT_EQ(SparseLinear(SparseLinearOptions(12, 8).bias(false))->named_parameters().size(), 1u);
}

TEST(SparseLinearTest, SparseForwardKeepsTheBias) {
  torch::manual_seed(6);
  SparseLinear layer(16, 8);
  layer->set_rule(std::make_shared<LayerRule>(Rule(Recipe::kDecay, {2, 4})));
  const torch::Tensor x = torch::randn({4, 16});
  const torch::Tensor masked = layer->weight * NMMask(layer->weight, {2, 4}, SparseDim::kRow, false);
  EXPECT_TRUE(torch::allclose(layer(x), torch::nn::functional::linear(x, masked, layer->bias)));
  layer(x).sum().backward();
  EXPECT_TRUE(layer->bias.grad().defined());
  // Straight through: the dense gradient, also at pruned positions.
  EXPECT_TRUE(torch::allclose(layer->weight.grad(), torch::ones({8, 4}).matmul(x)));
}

TEST(SparseConv2dTest, PatchEmbeddingWithMask) {
  torch::manual_seed(7);
  SparseConv2d conv(SparseConv2dOptions(4, 8, 2).stride(2));
  EXPECT_EQ(conv->weight.sizes(), (std::vector<int64_t>{8, 4, 2, 2}));
  const torch::Tensor x = torch::randn({2, 4, 6, 6});
  EXPECT_TRUE(torch::allclose(conv(x), torch::conv2d(x, conv->weight, conv->bias, 2)));
  auto rule = std::make_shared<LayerRule>(Rule(Recipe::kSrste, {1, 4}));
  rule->is_conv = true;
  conv->set_rule(rule);
  const torch::Tensor masked = conv->weight * NMMask(conv->weight, {1, 4}, SparseDim::kRow, true);
  EXPECT_TRUE(torch::allclose(conv(x), torch::conv2d(x, masked, conv->bias, 2)));
  EXPECT_TRUE(torch::equal(conv->EffectiveWeight().eq(0).sum(), torch::tensor(8 * 4 * 2 * 2 * 3 / 4)));
}

}  // namespace
}  // namespace nmsparse
