// HU24 (Hu et al., ICML 2024; docs/sparsity-method.md §12.3) as a sparsity method on a tiny ViT: the
// transposable mask held between refreshes at the authors' DeiT steps (golden_deit_schedule.json), the
// forward W * mask with the gradient straight through and MVUE on dW only, the masked decay on pruned
// weights after clipping, the dense phase as plain linears, the diagnostics and FLOPs reading what the layers
// compute, and the held masks through a checkpoint.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "schemas/model_catalog.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/sparsity_diagnostics.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/sparsity/two_four.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {
namespace {

std::shared_ptr<ClassifierImpl> TinyVit() {
  auto arch = LookupModel("vit_nano_patch7_28");
  EXPECT_TRUE(arch.ok());
  return CreateModel(*arch);
}

SparsityConfig Hu24(std::vector<PhaseSpec> phases = {}) {
  SparsityConfig config;
  config.sparsity_type = SparsityType::kHu24;
  config.nm = {2, 4};
  config.srste_lambda = 1e-3;
  config.phases = std::move(phases);
  return config;
}

std::shared_ptr<SparseLinearImpl> Fc1(ClassifierImpl& model) {
  for (const auto& item : model.named_modules()) {
    if (item.key() == "blocks.0.mlp.fc1") return std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
  }
  return nullptr;
}

constexpr char kFc1[] = "blocks.0.mlp.fc1";

void MoveWeights(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters()) p.add_(torch::randn_like(p) * 0.05);
}

double Number(const SparsityReport& report, const std::string& key) {
  for (const auto& [name, value] : report.numbers) {
    if (name == key) return value;
  }
  return -1.0;
}

// The masks are recomputed in the steps the authors' counter recomputes them, from the weights of that
// moment, and held (whatever W does) in between; all ones before the first.
TEST(Hu24Method, MasksFollowTheAuthorsCounter) {
  std::ifstream in("worker/sparsity/testdata/recipes/golden_deit_schedule.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json golden = nlohmann::json::parse(in);
  torch::manual_seed(1);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  SparsityConfig config = Hu24();
  config.mask_refresh_steps = golden["freq"].get<int>();
  auto method = CreateSparsityMethod(config, *model, SparsityMethodOptions(1, 40).seed(2));
  ASSERT_TRUE(method.ok()) << method.status();
  std::vector<int64_t> refreshes;
  torch::Tensor previous = (*method)->HeldMask(kFc1).clone();
  for (const auto& entry : golden["log"]) {
    const int64_t step = entry["optimizer_step"].get<int64_t>();
    (*method)->BeginStep(0, step - 1);
    const torch::Tensor held = (*method)->HeldMask(kFc1);
    EXPECT_EQ(held.eq(1).all().item<bool>(), entry["mask_all_ones_in_forward"].get<bool>()) << step;
    if (entry["mask_recomputed_in_forward"].get<bool>()) {
      refreshes.push_back(step);
      EXPECT_TRUE(torch::equal(held, AuthorsTransposableMask(fc1->weight))) << step;
    } else {
      EXPECT_TRUE(torch::equal(held, previous)) << step;
    }
    EXPECT_EQ(Number((*method)->Report(step, false), "mask_refresh_step"),
              refreshes.empty() ? 0.0 : static_cast<double>(refreshes.back()));
    previous = held.clone();
    MoveWeights(*model);  // The optimizer step.
  }
  EXPECT_EQ(refreshes, golden["recompute_steps"].get<std::vector<int64_t>>());
}

// Sparse phase: the forward multiplies W * mask, the bias gradient is the whole dY's (exact), and the masked
// decay adds lambda * W where the mask is 0 and nothing where it is 1.
TEST(Hu24Method, ForwardMasksAndDecayPullsPrunedWeights) {
  torch::manual_seed(5);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  SparsityConfig config = Hu24();
  config.mask_refresh_steps = 1;
  auto method = CreateSparsityMethod(config, *model, SparsityMethodOptions(1, 4).seed(3));
  ASSERT_TRUE(method.ok()) << method.status();
  (*method)->BeginStep(0, 0);
  const torch::Tensor mask = (*method)->HeldMask(kFc1).clone();
  EXPECT_TRUE(torch::equal(mask, AuthorsTransposableMask(fc1->weight)));
  const torch::Tensor x = torch::randn({2, 5, fc1->weight.size(1)});
  EXPECT_TRUE(torch::allclose(fc1->forward(x), torch::linear(x, fc1->weight * mask, fc1->bias), 1e-6, 1e-6));

  model->zero_grad();
  model->forward(torch::randn({3, 1, 28, 28})).square().sum().backward();
  const torch::Tensor grad = fc1->weight.grad().clone();
  (*method)->AfterBackward(0);
  (*method)->BeforeOptimizerUpdate(0);
  const torch::Tensor added = fc1->weight.grad() - grad;
  // float32: (grad + decay) - grad rounds twice at the scale of |grad| + |decay|, and the decay's own product
  // once more, so each element is within 2^-22 of that scale.
  const torch::Tensor decay = 1e-3 * fc1->weight.detach() * (1 - mask);
  EXPECT_TRUE(((added - decay).abs() <= (grad.abs() + decay.abs()) * std::ldexp(1.0, -22)).all().item<bool>())
      << (added - decay).abs().max().item<double>();
  EXPECT_TRUE(added.masked_select(mask.eq(1)).eq(0).all().item<bool>());
  EXPECT_GT(added.abs().sum().item<double>(), 0.0);
}

// A dense phase (the dense fine-tune) trains plain linears: the gradient is ordinary autograd's (no MVUE,
// so two steps' draws give the same gradient) and no decay is added.
TEST(Hu24Method, DensePhaseIsPlainAutograd) {
  torch::manual_seed(6);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  auto method = CreateSparsityMethod(Hu24({{PhaseKind::kDense, 1.0}}), *model, SparsityMethodOptions(1, 4));
  ASSERT_TRUE(method.ok()) << method.status();
  const torch::Tensor images = torch::randn({3, 1, 28, 28});
  std::vector<torch::Tensor> grads;
  for (int64_t step : {9, 19}) {
    (*method)->BeginStep(0, step);
    model->zero_grad();
    model->forward(images).square().sum().backward();
    (*method)->BeforeOptimizerUpdate(step);
    grads.push_back(fc1->weight.grad().clone());
  }
  EXPECT_TRUE(torch::equal(grads[0], grads[1]));
  EXPECT_TRUE((*method)->HeldMask(kFc1).eq(1).all().item<bool>());  // Never recomputed in a dense phase.
  const GemmDensity dense = (*method)->ForwardDensity();
  EXPECT_EQ(dense.ff, 1.0);
  EXPECT_EQ(dense.weight_gradient, 1.0);
}

// FLOPs: before the first mask the forward is dense and the MVUE weight gradient already 2:4; after it,
// all three GEMMs are 2:4.
TEST(Hu24Method, DensityCountsWhatTheLayersCompute) {
  auto model = TinyVit();
  auto method = CreateSparsityMethod(Hu24(), *model, SparsityMethodOptions(1, 40));
  ASSERT_TRUE(method.ok()) << method.status();
  (*method)->BeginStep(0, 8);
  GemmDensity before = (*method)->ForwardDensity();
  EXPECT_EQ(before.ff, 1.0);
  EXPECT_EQ(before.weight_gradient, 0.5);
  (*method)->BeginStep(0, 9);
  GemmDensity after = (*method)->ForwardDensity();
  EXPECT_EQ(after.ff, 0.5);
  EXPECT_EQ(after.weight_gradient, 0.5);
}

// The diagnostics read the held mask: pruned-gradient sums over its zeros, and no flips while it is held.
TEST(Hu24Method, DiagnosticsReadTheHeldMask) {
  torch::manual_seed(7);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  auto method = CreateSparsityMethod(Hu24(), *model, SparsityMethodOptions(1, 40));
  ASSERT_TRUE(method.ok()) << method.status();
  SparsityDiagnostics diagnostics(*model,
                                  [&](const std::string& layer) { return (*method)->HeldMask(layer); });
  const torch::Tensor images = torch::randn({3, 1, 28, 28});
  double pruned = 0.0;
  for (int64_t step : {9, 10}) {
    (*method)->BeginStep(0, step);
    model->zero_grad();
    model->forward(images).square().sum().backward();
    diagnostics.Observe(step + 1);
    pruned = fc1->weight.grad().square().masked_select((*method)->HeldMask(kFc1).eq(0)).sum().item<double>();
    MoveWeights(*model);  // W moves; the held mask does not, so nothing flips.
  }
  for (const LayerDiagnostics& layer : diagnostics.Read(11)) {
    if (layer.name != "blocks.0.mlp.fc1") continue;
    EXPECT_EQ(layer.flipped, 0.0);
    // Both sums add the same non-negative float32 squares in different orders: each is within
    // (n - 1) 2^-24 of the exact sum, relative, for the layer's n weights.
    EXPECT_NEAR(layer.pruned_grad_sq, pruned, 2 * fc1->weight.numel() * std::ldexp(1.0, -24) * pruned);
  }
}

// The held masks and the refresh counter are the method's checkpoint state; a mismatched state is refused.
TEST(Hu24Method, MasksComeBackFromTheCheckpoint) {
  torch::manual_seed(8);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  auto method = CreateSparsityMethod(Hu24(), *model, SparsityMethodOptions(1, 40).seed(1));
  ASSERT_TRUE(method.ok());
  (*method)->BeginStep(0, 9);
  const torch::Tensor mask = (*method)->HeldMask(kFc1).clone();
  const NamedTensors state = (*method)->StateDict();
  MoveWeights(*model);
  auto resumed = CreateSparsityMethod(Hu24(), *model, SparsityMethodOptions(1, 40).seed(1));
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->LoadStateDict(state).ok());
  (*resumed)->BeginStep(0, 12);  // Between refreshes: the checkpoint's mask, not one of the moved W.
  EXPECT_TRUE(torch::equal((*resumed)->HeldMask(kFc1), mask));
  EXPECT_EQ(Number((*resumed)->Report(13, false), "mask_refresh_step"), 10.0);
  EXPECT_FALSE((*resumed)->LoadStateDict({}).ok());
}

// The deployable model: W masked by a transposable 2:4 mask of its final values, served as a plain linear.
TEST(Hu24Method, DeployableWeightsAreTransposableTwoFour) {
  torch::manual_seed(9);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  auto method = CreateSparsityMethod(Hu24(), *model, SparsityMethodOptions(1, 40));
  ASSERT_TRUE(method.ok());
  (*method)->BeginStep(0, 9);
  MoveWeights(*model);
  const torch::Tensor want = fc1->weight.detach() * AuthorsTransposableMask(fc1->weight);
  ASSERT_TRUE((*method)->MaskWeightsAtTarget());
  EXPECT_TRUE(torch::equal(fc1->weight.detach(), want));
  const torch::Tensor x = torch::randn({2, 5, fc1->weight.size(1)});
  EXPECT_TRUE(torch::equal(fc1->forward(x), torch::linear(x, want, fc1->bias)));
}

}  // namespace
}  // namespace nmsparse
