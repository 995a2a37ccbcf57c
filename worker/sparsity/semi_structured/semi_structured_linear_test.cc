// The semi-structured linears where there are no 2:4 kernels (CPU, Bazel's LibTorch): the masked dense path
// against the engine's own masked linear, the transposable and activation masks, the dense switch and the
// installation on a model by name. The kernels themselves: cusparselt_gpu_test.cc on a GPU.
#include "worker/sparsity/semi_structured/semi_structured_linear.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "worker/compat/torch_compat.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/semi_structured/cusparselt_shape.h"
#include "worker/sparsity/semi_structured/semi_structured_gemm.h"
#include "worker/sparsity/semi_structured/semi_structured_layers_setup.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/sparsity/semi_structured/two_four_rule.h"
#include "worker/sparsity/sparse_functions.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

std::shared_ptr<LayerRule> Rule(Recipe recipe, float decay = 0.f, NM nm = {2, 4}) {
  auto rule = std::make_shared<LayerRule>();
  rule->recipe = recipe;
  rule->decay = decay;
  rule->srste_lambda = 0.5;  // Large, so that a lost SR-STE term would show.
  rule->blocks = {BlockRule{true, nm}};
  return rule;
}

std::shared_ptr<SemiStructuredLinear> CpuLinear(SemiStructuredKind kind,
                                                SemiStructuredMask mask = SemiStructuredMask::kExact) {
  return std::make_shared<SemiStructuredLinear>(kind, mask,
                                                MakeSemiStructuredGemm(torch::kCPU, SemiStructuredConfig()));
}

struct Grads {
  torch::Tensor y, dx, dw, db;
};

// Forward and backward of `layer` on a copy of `x`, with loss sum(y * g).
Grads RunLayer(SparseLinearImpl& layer, const torch::Tensor& x0, const torch::Tensor& g) {
  for (auto& p : layer.parameters()) p.mutable_grad() = torch::Tensor();
  torch::Tensor x = x0.clone().requires_grad_(true);
  torch::Tensor y = layer.forward(x);
  y.backward(g);
  return {y.detach(), x.grad(), layer.weight.grad().clone(), layer.bias.grad().clone()};
}

// Both paths run the same fp32 ops on the same operands; a tolerance of a few ulps of the largest value
// still allows for a different summation order inside the GEMM.
void ExpectClose(const torch::Tensor& a, const torch::Tensor& b, const char* what) {
  const double scale = std::max(1.0, b.abs().max().item<double>());
  EXPECT_LE((a - b).abs().max().item<double>(), 64 * 1.2e-7 * scale) << what;
}

void ExpectSameLinear(const Grads& got, const Grads& want) {
  ExpectClose(got.y, want.y, "y");
  ExpectClose(got.dx, want.dx, "dx");
  ExpectClose(got.dw, want.dw, "dw");
  ExpectClose(got.db, want.db, "db");
}

class SemiStructuredLinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    engine_layer_ = std::make_shared<SparseLinearImpl>(64, 32);
    accelerated_ = std::make_shared<SparseLinearImpl>(64, 32);
    torch::NoGradGuard no_grad;
    accelerated_->weight.copy_(engine_layer_->weight);
    accelerated_->bias.copy_(engine_layer_->bias);
    x_ = torch::randn({3, 5, 64});
    g_ = torch::randn({3, 5, 32});
  }

  void SetRule(std::shared_ptr<LayerRule> rule) {
    engine_layer_->set_rule(rule);
    accelerated_->set_rule(rule);
  }

  std::shared_ptr<SparseLinearImpl> engine_layer_, accelerated_;
  torch::Tensor x_, g_;
};

TEST_F(SemiStructuredLinearTest, MaskedDenseFallbackIsTheEnginesLinear) {
  auto linear = CpuLinear(SemiStructuredKind::kWeight);
  accelerated_->set_accelerator(linear);
  for (auto rule : {Rule(Recipe::kSrste), Rule(Recipe::kDecay, 0.f), Rule(Recipe::kDecay, 0.3f),
                    Rule(Recipe::kSrste, 0.f, {1, 8}), Rule(Recipe::kDense)}) {
    SetRule(rule);
    ExpectSameLinear(RunLayer(*accelerated_, x_, g_), RunLayer(*engine_layer_, x_, g_));
    EXPECT_FALSE(linear->last_path().kernel);
  }
}

TEST_F(SemiStructuredLinearTest, SaysWhyTheKernelDidNotRun) {
  auto linear = CpuLinear(SemiStructuredKind::kWeight);
  accelerated_->set_accelerator(linear);
  SetRule(Rule(Recipe::kSrste));
  RunLayer(*accelerated_, x_, g_);
  EXPECT_EQ(linear->last_path().reason, "device cpu");
  SetRule(Rule(Recipe::kDecay, 0.25f));
  RunLayer(*accelerated_, x_, g_);
  EXPECT_EQ(linear->last_path().reason, "decay D=0.25 keeps pruned weights");
  SetRule(Rule(Recipe::kSrste, 0.f, {1, 8}));
  RunLayer(*accelerated_, x_, g_);
  EXPECT_EQ(linear->last_path().reason, "N:M 1:8");
}

TEST_F(SemiStructuredLinearTest, DenseAfterTheSwitchIgnoresTheRule) {
  auto linear = CpuLinear(SemiStructuredKind::kWeight);
  accelerated_->set_accelerator(linear);
  SetRule(Rule(Recipe::kSrste));
  linear->set_dense(true);
  const Grads got = RunLayer(*accelerated_, x_, g_);
  engine_layer_->set_rule(nullptr);  // The ordinary dense linear.
  ExpectSameLinear(got, RunLayer(*engine_layer_, x_, g_));
  EXPECT_EQ(linear->last_path().reason, "dense_after");
}

TEST(TransposableMaskTest, TwoOfFourAlongBothDimensions) {
  const torch::Tensor patterns = TransposableTwoFourPatterns();
  ASSERT_EQ(patterns.size(0), 90);
  const torch::Tensor tiles = patterns.view({90, 4, 4});
  EXPECT_TRUE(tiles.sum(1).eq(2).all().item<bool>());
  EXPECT_TRUE(tiles.sum(2).eq(2).all().item<bool>());

  torch::manual_seed(3);
  const torch::Tensor w = torch::randn({32, 48});
  const torch::Tensor mask = TransposableTwoFourMask(w);
  EXPECT_TRUE(mask.view({-1, 4}).sum(1).eq(2).all().item<bool>());  // 2:4 along in_features.
  EXPECT_TRUE(
      mask.t().contiguous().view({-1, 4}).sum(1).eq(2).all().item<bool>());  // And along out_features.
  // No transposable pattern keeps more magnitude in a tile than the chosen one (checked on the first tile).
  const torch::Tensor tile = w.abs().slice(0, 0, 4).slice(1, 0, 4).reshape({16});
  const double kept = (tile * mask.slice(0, 0, 4).slice(1, 0, 4).reshape({16})).sum().item<double>();
  EXPECT_GE(kept + 1e-6, patterns.matmul(tile).max().item<double>());
}

TEST(TransposableMaskTest, EqualsTheRowMaskWhereThatIsTransposable) {
  // Row i of every 4x4 tile has its two large values at columns i and i + 1 (mod 4): two per column too, so
  // the row-wise 2:4 mask is transposable and keeps the most magnitude.
  torch::manual_seed(4);
  torch::Tensor w = torch::rand({8, 8}) * 0.1;
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t tile = 0; tile < 2; ++tile) {
      w[r][4 * tile + r % 4] = 5.0 + r;
      w[r][4 * tile + (r + 1) % 4] = -4.0 - r;
    }
  }
  EXPECT_TRUE(torch::equal(TransposableTwoFourMask(w), NMMask(w, {2, 4}, SparseDim::kRow, false)));
}

// Every 4x4 0/1 tile with two ones per row and per column, by brute force over the 2^16 tiles, in the order
// of its rows' bit values: the table, pattern for pattern.
TEST(TransposableMaskTest, PatternTableIsEveryTransposableTileInOrder) {
  std::vector<float> want;
  for (int row0 = 0; row0 < 16; ++row0) {
    for (int row1 = 0; row1 < 16; ++row1) {
      for (int row2 = 0; row2 < 16; ++row2) {
        for (int row3 = 0; row3 < 16; ++row3) {
          const int rows[4] = {row0, row1, row2, row3};
          bool two_each = true;
          for (int i = 0; i < 4; ++i) {
            int column = 0;
            for (int r : rows) column += (r >> i) & 1;
            two_each = two_each && __builtin_popcount(rows[i]) == 2 && column == 2;
          }
          if (!two_each) continue;
          for (int r : rows) {
            for (int col = 0; col < 4; ++col) want.push_back(static_cast<float>((r >> col) & 1));
          }
        }
      }
    }
  }
  ASSERT_EQ(want.size(), 90u * 16u);
  EXPECT_TRUE(torch::equal(TransposableTwoFourPatterns(), torch::tensor(want).view({90, 16})));
}

// The pattern of each tile by brute force: the sum of |w| of every pattern in double, the first maximum.
torch::Tensor BruteForceTransposableMask(const torch::Tensor& w) {
  const torch::Tensor patterns = TransposableTwoFourPatterns().to(torch::kDouble);
  const torch::Tensor a = w.abs().to(torch::kDouble);
  torch::Tensor mask = torch::zeros(w.sizes(), torch::kFloat32);
  for (int64_t i = 0; i < w.size(0); i += 4) {
    for (int64_t j = 0; j < w.size(1); j += 4) {
      const torch::Tensor tile = a.slice(0, i, i + 4).slice(1, j, j + 4).reshape({16});
      int64_t best = 0;
      double best_score = -1;
      for (int64_t p = 0; p < 90; ++p) {
        const double score = (tile * patterns[p]).sum().item<double>();
        if (score > best_score) best = p, best_score = score;
      }
      mask.slice(0, i, i + 4).slice(1, j, j + 4).copy_(patterns[best].view({4, 4}));
    }
  }
  return mask;
}

TEST(TransposableMaskTest, ChoosesTheBruteForceBestPattern) {
  // Small integers: every sum is exact, so the choice (ties to the first pattern included) must be identical.
  torch::manual_seed(5);
  const torch::Tensor ints = torch::randint(-4, 5, {16, 24}).to(torch::kFloat32);
  EXPECT_TRUE(torch::equal(TransposableTwoFourMask(ints), BruteForceTransposableMask(ints)));
  // Random values: the kept magnitude of every tile is the brute-force best's.
  const torch::Tensor w = torch::randn({32, 48});
  const torch::Tensor kept = (w.abs() * TransposableTwoFourMask(w)).view({8, 4, 12, 4}).sum({1, 3});
  const torch::Tensor best = (w.abs() * BruteForceTransposableMask(w)).view({8, 4, 12, 4}).sum({1, 3});
  EXPECT_TRUE(torch::allclose(kept, best, 1e-6, 1e-6));
}

// Under bf16 autocast (the training forward pass) the scores stay fp32: the same mask as an fp32 run. And a
// bf16 weight chooses what the same values in fp32 choose.
TEST(TransposableMaskTest, SameMaskUnderBf16AutocastAndForBf16Weights) {
  torch::manual_seed(6);
  const torch::Tensor w = torch::randn({256, 256}).to(torch::kBFloat16).to(torch::kFloat32);
  const torch::Tensor fp32 = TransposableTwoFourMask(w);
  const bool was_enabled = compat::IsAutocastEnabled(c10::DeviceType::CPU);
  const c10::ScalarType was_dtype = compat::AutocastDtype(c10::DeviceType::CPU);
  compat::SetAutocastDtype(c10::DeviceType::CPU, torch::kBFloat16);
  compat::SetAutocastEnabled(c10::DeviceType::CPU, true);
  const torch::Tensor under_autocast = TransposableTwoFourMask(w);
  compat::SetAutocastEnabled(c10::DeviceType::CPU, was_enabled);
  compat::SetAutocastDtype(c10::DeviceType::CPU, was_dtype);
  EXPECT_TRUE(torch::equal(under_autocast, fp32));
  EXPECT_TRUE(torch::equal(TransposableTwoFourMask(w.to(torch::kBFloat16)), fp32));
}

TEST_F(SemiStructuredLinearTest, TransposableMaskKeepsTheRecipesGradient) {
  auto linear = CpuLinear(SemiStructuredKind::kWeight, SemiStructuredMask::kTransposable);
  accelerated_->set_accelerator(linear);
  SetRule(Rule(Recipe::kSrste));
  const Grads got = RunLayer(*accelerated_, x_, g_);
  const torch::Tensor w = accelerated_->weight.detach();
  const torch::Tensor mask = TransposableTwoFourMask(w);
  const torch::Tensor x2 = x_.view({-1, 64}), g2 = g_.view({-1, 32});
  const torch::Tensor w_tilde = w * mask;
  ExpectClose(got.y, torch::linear(x_, w_tilde, accelerated_->bias.detach()), "y");
  ExpectClose(got.dx, g_.matmul(w_tilde), "dx");
  ExpectClose(got.dw, g2.t().mm(x2) + 0.5 * (1 - mask) * w, "dw (SR-STE term at pruned weights)");
}

TEST_F(SemiStructuredLinearTest, ActivationTwoFourPrunesTheInput) {
  auto linear = CpuLinear(SemiStructuredKind::kActivation);
  accelerated_->set_accelerator(linear);
  const Grads got = RunLayer(*accelerated_, x_, g_);
  const torch::Tensor mask = ActivationTwoFourMask(x_);
  EXPECT_TRUE(mask.view({-1, 4}).sum(1).eq(2).all().item<bool>());
  // The two kept are the two largest magnitudes of each group.
  const torch::Tensor groups = x_.abs().view({-1, 4}), kept = mask.view({-1, 4});
  const torch::Tensor min_kept = (groups + (1 - kept) * 1e9).amin(1);
  const torch::Tensor max_pruned = (groups * (1 - kept)).amax(1);
  EXPECT_TRUE(min_kept.ge(max_pruned).all().item<bool>());
  const torch::Tensor w = accelerated_->weight.detach();
  ExpectClose(got.y, torch::linear(x_ * mask, w, accelerated_->bias.detach()), "y");
  ExpectClose(got.dx, g_.matmul(w) * mask, "dx (zero at pruned activations)");
  ExpectClose(got.dw, g_.reshape({-1, 32}).t().mm((x_ * mask).reshape({-1, 64})), "dw");
}

// The engine's N:M selection, group by group: the two largest |x|, ties to the lower index. The same mask for
// the same values in bf16.
TEST(ActivationTwoFourMaskTest, TwoLargestOfEveryGroupTiesToTheLowerIndex) {
  torch::manual_seed(8);
  const torch::Tensor x = torch::randint(-3, 4, {6, 5, 16}).to(torch::kFloat32);  // Many ties.
  const torch::Tensor mask = ActivationTwoFourMask(x);
  ASSERT_EQ(mask.sizes(), x.sizes());
  const torch::Tensor groups = x.abs().reshape({-1, 4}), got = mask.reshape({-1, 4});
  for (int64_t g = 0; g < groups.size(0); ++g) {
    std::vector<int64_t> order = {0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return groups[g][a].item<float>() > groups[g][b].item<float>();
    });
    torch::Tensor want = torch::zeros({4});
    want[order[0]] = 1;
    want[order[1]] = 1;
    ASSERT_TRUE(torch::equal(got[g], want)) << "group " << g << ": " << groups[g];
  }
  EXPECT_TRUE(torch::equal(ActivationTwoFourMask(x.to(torch::kBFloat16)), mask.to(torch::kBFloat16)));
}

// The plans a linear's GEMMs need: the plan cache's keys.
TEST(CusparseLtShapeTest, PlansOfEachKindAndOrder) {
  const LinearGemm weight{
      SemiStructuredKind::kWeight, /*m=*/50432, /*k=*/768, /*n=*/3072, true, torch::kBFloat16};
  LinearPlans p = PlansFor(weight, /*transposable=*/false, OutputOrder::kColumn);
  EXPECT_EQ(p.forward, (CusparseLtShape{3072, 50432, 768, torch::kBFloat16, true, true}));  // W~ X^T, bias.
  EXPECT_FALSE(p.input_grad.has_value());
  p = PlansFor(weight, /*transposable=*/true, OutputOrder::kRow);
  EXPECT_EQ(p.forward, (CusparseLtShape{3072, 50432, 768, torch::kBFloat16, false, true}));
  ASSERT_TRUE(p.input_grad.has_value());
  EXPECT_EQ(*p.input_grad,
            (CusparseLtShape{768, 50432, 3072, torch::kBFloat16, false, false}));  // W~^T dY^T.
  LinearGemm activation = weight;
  activation.kind = SemiStructuredKind::kActivation;
  p = PlansFor(activation, /*transposable=*/true, OutputOrder::kColumn);
  EXPECT_EQ(p.forward, (CusparseLtShape{50432, 3072, 768, torch::kBFloat16, false, false}));  // X24 W^T.
  EXPECT_FALSE(p.input_grad.has_value());
  // Shapes that differ in anything are different plans.
  LinearGemm no_bias = weight;
  no_bias.bias = false;
  EXPECT_TRUE(PlansFor(no_bias, false, OutputOrder::kColumn).forward <
                  PlansFor(weight, false, OutputOrder::kColumn).forward ||
              PlansFor(weight, false, OutputOrder::kColumn).forward <
                  PlansFor(no_bias, false, OutputOrder::kColumn).forward);
  setenv("NMSPARSE_CUSPARSELT_OUTPUT", "row", 1);
  EXPECT_EQ(OutputOrderFromEnv(), OutputOrder::kRow);
  setenv("NMSPARSE_CUSPARSELT_OUTPUT", "sideways", 1);
  EXPECT_THROW(OutputOrderFromEnv(), c10::Error);
  unsetenv("NMSPARSE_CUSPARSELT_OUTPUT");
  EXPECT_EQ(OutputOrderFromEnv(), OutputOrder::kColumn);
}

// A backend that records what the layers ask of it (the set-up and per-step calls of SemiStructuredGemm).
class RecordingGemm : public SemiStructuredGemm {
 public:
  torch::Tensor WeightSparseLinear(const torch::Tensor& input, const torch::Tensor& w_tilde,
                                   const torch::Tensor& bias, bool) override {
    return torch::linear(input, w_tilde, bias);
  }
  torch::Tensor ActivationSparseLinear(const torch::Tensor& input_24, const torch::Tensor& weight,
                                       const torch::Tensor& bias) override {
    return torch::linear(input_24, weight, bias);
  }
  GemmDecision Prepare(const LinearGemm& gemm) override {
    prepared.push_back(gemm);
    return {true, 1.5, "prepared"};
  }
  GemmDecision Decide(const LinearGemm& gemm) const override {
    for (const LinearGemm& p : prepared) {
      if (!(p < gemm) && !(gemm < p)) return {true, 1.5, "prepared"};
    }
    return {false, 0, "not prepared before step 1"};
  }
  std::vector<LinearGemm> prepared;
};

// Set-up sees every batch shape; a step only looks its decision up, and a shape not seen runs masked dense.
TEST(SemiStructuredPrepareTest, PlansAreMadeAtSetUpOnly) {
  auto gemm = std::make_shared<RecordingGemm>();
  SemiStructuredLinear linear(SemiStructuredKind::kWeight, SemiStructuredMask::kExact, {gemm, ""});
  const auto rule = Rule(Recipe::kSrste);
  const torch::Tensor w = torch::randn({32, 64}), b = torch::zeros({32});
  linear.set_preparing(true);
  for (int64_t batch : {8, 3}) linear.Forward(torch::randn({batch, 5, 64}), w, rule.get(), b);
  linear.set_preparing(false);
  ASSERT_EQ(gemm->prepared.size(), 2u);
  EXPECT_EQ(gemm->prepared[0].m, 8 * 5);
  EXPECT_EQ(gemm->prepared[0].k, 64);
  EXPECT_EQ(gemm->prepared[0].n, 32);
  EXPECT_TRUE(gemm->prepared[0].bias);
  EXPECT_EQ(gemm->prepared[1].m, 3 * 5);

  linear.Forward(torch::randn({3, 5, 64}), w, rule.get(), b);
  EXPECT_TRUE(linear.last_path().kernel);
  linear.Forward(torch::randn({4, 5, 64}), w, rule.get(), b);
  EXPECT_FALSE(linear.last_path().kernel);
  EXPECT_EQ(linear.last_path().reason, "not prepared before step 1");
  EXPECT_EQ(gemm->prepared.size(), 2u);  // Nothing set up by the steps.
}

// blocks.{0,1}.mlp.{fc1,fc2} and head, as in a ViT.
struct TinyMlp : torch::nn::Module {
  TinyMlp() {
    fc1 = register_module("fc1", SparseLinear(16, 64));
    fc2 = register_module("fc2", SparseLinear(64, 16));
  }
  SparseLinear fc1{nullptr}, fc2{nullptr};
};
struct TinyBlock : torch::nn::Module {
  TinyBlock() { mlp = register_module("mlp", std::make_shared<TinyMlp>()); }
  std::shared_ptr<TinyMlp> mlp;
};
struct TinyModel : torch::nn::Module {
  TinyModel() {
    blocks = register_module(
        "blocks", torch::nn::ModuleList(std::make_shared<TinyBlock>(), std::make_shared<TinyBlock>()));
    head = register_module("head", SparseLinear(16, 10));
  }
  torch::nn::ModuleList blocks{nullptr};
  SparseLinear head{nullptr};
};

TEST(SemiStructuredLayersTest, InstallsByNameSwitchesDenseAndDetaches) {
  TinyModel model;
  SemiStructuredConfig config;
  config.layers = {"blocks.*.mlp.fc1"};
  config.activation_layers = {"blocks.1.mlp.fc2"};
  config.dense_after_fraction = 0.5;
  SparsityConfig sparsity;
  auto installed = SemiStructuredLayers::Install(config, sparsity, /*total_epochs=*/2, /*steps_per_epoch=*/5,
                                                 model, torch::kCPU);
  ASSERT_TRUE(installed.ok()) << installed.status();
  auto& layers = **installed;
  const auto report = layers.Report();
  ASSERT_EQ(report.size(), 3u);
  EXPECT_EQ(report[0].name, "blocks.0.mlp.fc1");
  EXPECT_EQ(report[1].name, "blocks.1.mlp.fc1");
  EXPECT_EQ(report[2].name, "blocks.1.mlp.fc2");
  EXPECT_EQ(report[2].kind, SemiStructuredKind::kActivation);
  EXPECT_EQ(report[0].path.reason, "not run yet");
  auto* fc1 = model.blocks[0]->as<TinyBlock>()->mlp->fc1.get();
  EXPECT_TRUE(fc1->accelerated());
  EXPECT_FALSE(model.head->accelerated());

  layers.BeginStep(4);
  fc1->forward(torch::randn({2, 16}));
  EXPECT_EQ(FormatSemiStructuredReport(layers.Report()[0]), "weight_2:4 masked dense (dense rule)");
  layers.BeginStep(5);  // floor(0.5 * 10): the first dense step.
  fc1->forward(torch::randn({2, 16}));
  EXPECT_EQ(layers.Report()[0].path.reason, "dense_after");
  EXPECT_EQ(FormatSemiStructuredReport(layers.Report()[0]), "weight_2:4 dense (dense_after)");

  installed->reset();
  EXPECT_FALSE(fc1->accelerated());
}

TEST(SemiStructuredLayersTest, NothingChosenAndBadPatterns) {
  TinyModel model;
  SparsityConfig sparsity;
  auto none = SemiStructuredLayers::Install(SemiStructuredConfig(), sparsity, 1, 1, model, torch::kCPU);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  SemiStructuredConfig config;
  config.layers = {"blocks.*.attn.qkv"};
  auto bad = SemiStructuredLayers::Install(config, sparsity, 1, 1, model, torch::kCPU);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("semi_structured.layers[0]"), std::string::npos);
}

// Without 2:4 kernels (here: the CPU) there is nothing to set up: the forward passes are not even run.
TEST(SemiStructuredLayersTest, PrepareRunsNothingWithoutKernels) {
  TinyModel model;
  SemiStructuredConfig config;
  config.layers = {"blocks.*.mlp.fc1"};
  config.mask = SemiStructuredMask::kTransposable;
  auto installed = SemiStructuredLayers::Install(config, SparsityConfig(), 1, 5, model, torch::kCPU);
  ASSERT_TRUE(installed.ok()) << installed.status();
  int passes = 0;
  (*installed)->Prepare(0, [&] { ++passes; });
  EXPECT_EQ(passes, 0);
}

TEST(TwoFourRuleTest, OnlyHardTwoFourMasksQualify) {
  EXPECT_EQ(WhyNotTwoFour(nullptr), "dense rule");
  EXPECT_EQ(WhyNotTwoFour(Rule(Recipe::kSrste).get()), "");
  EXPECT_EQ(WhyNotTwoFour(Rule(Recipe::kDecay, 0.f).get()), "");
  auto col = Rule(Recipe::kSrste);
  col->sparse_dim = SparseDim::kCol;
  EXPECT_NE(WhyNotTwoFour(col.get()), "");
  auto qkv = Rule(Recipe::kSrste);
  qkv->blocks = {BlockRule{true, {2, 4}}, BlockRule{true, {2, 4}}, BlockRule{false, {2, 4}}};
  EXPECT_EQ(WhyNotTwoFour(qkv.get()), "a dense row block");
}

}  // namespace
}  // namespace nmsparse
