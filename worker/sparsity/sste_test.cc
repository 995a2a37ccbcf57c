// S-STE against golden_sste.json (the authors' soft threshold, init_scale and SoftThreshold autograd) and as
// a sparsity method on a tiny ViT: beta frozen at construction and checkpointed, the forward beta * S(W),
// and the MVUE weight gradient drawn per step while every other gradient stays exact.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "schemas/model_catalog.h"
#include "worker/sparsity/mvue_linear.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/sparsity/sste_method.h"
#include "worker/sparsity/two_four.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {
namespace {

using nlohmann::json;

json Golden() {
  std::ifstream in("worker/sparsity/testdata/recipes/golden_sste.json");
  EXPECT_TRUE(in.good()) << "golden_sste.json missing";
  return in.good() ? json::parse(in) : json::object();
}

torch::Tensor ToTensor(const json& nested) {
  std::vector<int64_t> shape;
  for (const json* level = &nested; level->is_array(); level = &(*level)[0]) shape.push_back(level->size());
  std::vector<double> flat;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (!j.is_array()) return flat.push_back(j.get<double>());
    for (const json& e : j) walk(e);
  };
  walk(nested);
  return torch::tensor(flat, torch::kDouble).to(torch::kFloat).reshape(shape);
}

// |a - e| <= rtol |e| element-wise (expected zeros exact).
void ExpectClose(const torch::Tensor& a, const torch::Tensor& e, double rtol, const std::string& what) {
  ASSERT_EQ(a.sizes(), e.sizes()) << what;
  const torch::Tensor diff = (a.to(torch::kDouble) - e.to(torch::kDouble)).abs();
  EXPECT_TRUE(diff.le(e.to(torch::kDouble).abs() * rtol).all().item<bool>())
      << what << ": max |diff| " << diff.max().item<double>();
}

TEST(SoftThreshold, MatchesTheAuthorsOnRandomAndTiedGroups) {
  const json golden = Golden();
  ASSERT_FALSE(golden.empty());
  for (const auto& [name, c] : golden.at("cases").items()) {
    const torch::Tensor x = ToTensor(c.at("input"));
    // One fp32 subtraction per kept entry, as the authors': the same bits (rtol 1e-6 is the files' bound).
    ExpectClose(SoftThresholdTwoFour(x), ToTensor(c.at("output")), 1e-6, name);
    ExpectClose(SoftThresholdTwoFour(x), ToTensor(c.at("triton_output")), 1e-6, name + " triton");
    // The positions the authors write are the hard 2:4 mask (higher index wins).
    EXPECT_TRUE(torch::equal(HardTwoFourMask(x), ToTensor(c.at("triton_mask")))) << name;
  }
  for (const json& demo : golden.at("continuity_demo")) {
    ExpectClose(SoftThresholdTwoFour(ToTensor(demo.at("input"))), ToTensor(demo.at("output")), 1e-6,
                "continuity");
  }
}

TEST(SoftThreshold, ScaleForwardWeightAndStraightThroughGradient) {
  const json golden = Golden();
  ASSERT_FALSE(golden.empty());
  for (const auto& [name, c] : golden.at("scale_and_ste").items()) {
    const torch::Tensor w = ToTensor(c.at("weight")).requires_grad_(true);
    const double beta = c.at("beta_from_init_scale").get<double>();
    // The authors sum 128-512 products in fp32 (torch's pairwise reduction), we in fp64: their rounding is
    // below log2(n) * 2^-24 relative, 1.2e-6 at n = 512, so rtol 1e-5 (the files' GEMM tolerance) holds.
    EXPECT_NEAR(SoftThresholdScale(w), beta, 1e-5 * beta) << name;
    const torch::Tensor effective =
        StraightThrough(w, SoftThresholdTwoFour(w).mul_(static_cast<float>(beta)));
    ExpectClose(effective, ToTensor(c.at("forward_weight")), 1e-6, name + " forward weight");
    effective.backward(ToTensor(c.at("upstream_grad")));
    EXPECT_TRUE(torch::equal(w.grad(), ToTensor(c.at("weight_grad")))) << name << ": W.grad is not upstream";
  }
}

std::shared_ptr<ClassifierImpl> TinyVit() {
  auto arch = LookupModel("vit_nano_patch7_28");
  EXPECT_TRUE(arch.ok());
  return CreateModel(*arch);
}

SparsityConfig Sste() {
  SparsityConfig config;
  config.sparsity_type = SparsityType::kSste;
  config.nm = {2, 4};
  return config;
}

std::shared_ptr<SparseLinearImpl> Fc1(ClassifierImpl& model) {
  for (const auto& item : model.named_modules()) {
    if (item.key() == "blocks.0.mlp.fc1") return std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
  }
  return nullptr;
}

TEST(SsteMethod, ForwardIsTheFrozenScaleTimesTheSoftThreshold) {
  torch::manual_seed(3);
  auto model = TinyVit();
  auto fc1 = Fc1(*model);
  ASSERT_NE(fc1, nullptr);
  const double beta0 = SoftThresholdScale(fc1->weight);
  auto method = CreateSparsityMethod(Sste(), *model, SparsityMethodOptions(1, 4).seed(5));
  ASSERT_TRUE(method.ok()) << method.status();
  (*method)->BeginStep(0, 0);
  {
    torch::NoGradGuard no_grad;
    fc1->weight.add_(torch::randn_like(fc1->weight));  // Training moves W; beta stays the initial one.
  }
  const torch::Tensor x = torch::randn({2, 5, fc1->weight.size(1)});
  const torch::Tensor want =
      torch::linear(x, SoftThresholdTwoFour(fc1->weight) * static_cast<float>(beta0), fc1->bias);
  ExpectClose(fc1->forward(x).detach(), want.detach(), 1e-6, "fc1");

  const NamedTensors state = (*method)->StateDict();
  ASSERT_FALSE(state.empty());
  EXPECT_EQ(state.front().first, "sste_beta/blocks.0.mlp.fc1");
  EXPECT_DOUBLE_EQ(state.front().second.item<double>(), beta0);
  // A resumed run gets the checkpoint's beta, not one from its (trained) weights.
  auto resumed = CreateSparsityMethod(Sste(), *model, SparsityMethodOptions(1, 4).seed(5));
  ASSERT_TRUE(resumed.ok());
  EXPECT_NE((*resumed)->StateDict().front().second.item<double>(), beta0);
  ASSERT_TRUE((*resumed)->LoadStateDict(state).ok());
  EXPECT_DOUBLE_EQ((*resumed)->StateDict().front().second.item<double>(), beta0);
  EXPECT_FALSE((*resumed)->LoadStateDict({}).ok());
}

// MVUE touches dW only: bias gradients (from the whole dY, and dX is exact at every layer) do not depend on
// the draw, weight gradients do, and a step's draw repeats from (seed, step).
TEST(SsteMethod, WeightGradientIsDrawnPerStepAndNothingElseIs) {
  torch::manual_seed(4);
  auto model = TinyVit();
  auto method = CreateSparsityMethod(Sste(), *model, SparsityMethodOptions(1, 4).seed(9));
  ASSERT_TRUE(method.ok()) << method.status();
  auto fc1 = Fc1(*model);
  const torch::Tensor images = torch::randn({3, 1, 28, 28});
  const auto gradients = [&](int64_t step) {
    model->zero_grad();
    (*method)->BeginStep(0, step);
    model->forward(images).square().sum().backward();
    return std::make_pair(fc1->weight.grad().clone(), fc1->bias.grad().clone());
  };
  const auto [w1, b1] = gradients(1);
  const auto [w2, b2] = gradients(2);
  const auto [w1_again, b1_again] = gradients(1);
  EXPECT_TRUE(torch::equal(w1, w1_again));
  EXPECT_FALSE(torch::equal(w1, w2));
  EXPECT_TRUE(torch::allclose(b1, b2, 1e-5, 1e-6));
}

TEST(SsteMethod, StepSeedsDiffer) {
  EXPECT_NE(MvueStepSeed(1, 0), MvueStepSeed(1, 1));
  EXPECT_NE(MvueStepSeed(1, 0), MvueStepSeed(2, 0));
}

}  // namespace
}  // namespace nmsparse
