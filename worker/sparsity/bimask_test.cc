// Bi-Mask (Zhang et al., ICML 2023; docs/sparsity-method.md §14) against golden_bimask.json, produced by the
// authors' code (zyxxmu/Bi-Mask@e63cd37f): the forward and backward masks exactly, the permutation search's
// scores and choice over the recorded candidates, and the layer's forward and backward with a [B, T, C]
// input within bounds derived from the float32 arithmetic; then as a sparsity method on a tiny ViT: the
// forward-call counter, its state through a checkpoint, the diagnostics' mask and the FLOP densities.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "schemas/model_catalog.h"
#include "worker/sparsity/bimask_masks.h"
#include "worker/sparsity/bimask_method.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {
namespace {

using json = nlohmann::json;

constexpr NM kTwoFour{2, 4};
// float32's unit roundoff.
constexpr double kU = 5.9604644775390625e-08;

json Golden() {
  std::ifstream in("worker/sparsity/testdata/recipes/golden_bimask.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

// A nested list of numbers as a tensor of `dtype` (doubles hold the float32 values exactly).
torch::Tensor Tensor(const json& values, torch::ScalarType dtype = torch::kFloat) {
  std::vector<int64_t> shape;
  for (const json* v = &values; v->is_array(); v = &(*v)[0]) shape.push_back(static_cast<int64_t>(v->size()));
  std::vector<double> flat;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (!v.is_array()) return flat.push_back(v.get<double>());
    for (const json& e : v) walk(e);
  };
  walk(values);
  return torch::tensor(flat, torch::kDouble).view(shape).to(dtype);
}

void ExpectEqualMasks(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(actual.to(torch::kFloat).equal(expected.to(torch::kFloat))) << what << "\n"
                                                                          << actual << "\n"
                                                                          << expected;
}

// |actual - expected| <= bound element-wise, with the worst element named on failure.
void ExpectWithin(const torch::Tensor& actual, const torch::Tensor& expected, const torch::Tensor& bound,
                  const std::string& what) {
  const torch::Tensor excess = (actual.to(torch::kDouble) - expected.to(torch::kDouble)).abs() - bound;
  EXPECT_LE(excess.max().item<double>(), 0.0) << what << ": worst excess " << excess.max().item<double>();
}

TEST(BimaskMasks, ForwardMaskIsTheAuthors) {
  const json golden = Golden();
  const torch::Tensor w = Tensor(golden["weight_out_x_in"]);
  ExpectEqualMasks(BimaskForwardMask(w, kTwoFour).t(), Tensor(golden["forward_mask_in_x_out"]), "forward");
}

TEST(BimaskMasks, BackwardMaskUnderEachPermutationIsTheAuthors) {
  const json golden = Golden();
  const torch::Tensor w = Tensor(golden["weight_out_x_in"]);
  const torch::Tensor forward = BimaskForwardMask(w, kTwoFour);
  for (const std::string name : {"identity", "rs0"}) {
    const torch::Tensor permutation = Tensor(golden["permutations"][name], torch::kLong);
    const torch::Tensor backward = BimaskBackwardMask(w, forward, permutation, kTwoFour);
    ExpectEqualMasks(backward.t(), Tensor(golden["backward_mask_in_x_out"][name]), name);
    // A subset of the forward mask, N:M along the permuted output rows.
    EXPECT_TRUE((backward * (1 - forward)).eq(0).all().item<bool>()) << name;
    EXPECT_TRUE(
        backward.index_select(0, permutation).view({-1, 4, w.size(1)}).sum(1).le(2).all().item<bool>());
  }
}

// The candidates the authors drew (numpy's global RNG, seed 7) are fed in: the scores are exact integers and
// the choice is the first maximum.
TEST(BimaskMasks, PermutationSearchScoresAndChoiceAreTheAuthors) {
  const json golden = Golden();
  const torch::Tensor w = Tensor(golden["weight_out_x_in"]);
  const json& search = golden["best_permutation"];
  const torch::Tensor candidates = Tensor(search["candidates_in_draw_order"], torch::kLong);
  ExpectEqualMasks(BimaskPermutationScores(w, candidates, kTwoFour),
                   Tensor(search["scores_(#weights kept by both masks)"]), "scores");
  ExpectEqualMasks(BimaskBestPermutation(w, candidates, kTwoFour), Tensor(search["chosen"], torch::kLong),
                   "chosen");
}

TEST(BimaskMasks, CandidatesArePermutationsFromTheSeed) {
  const torch::Tensor a = BimaskCandidates(12, 5), b = BimaskCandidates(12, 5), c = BimaskCandidates(12, 6);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{kBimaskCandidates, 12}));
  EXPECT_TRUE(a.equal(b));
  EXPECT_FALSE(a.equal(c));
  EXPECT_TRUE(std::get<0>(a.sort(1)).equal(torch::arange(12, torch::kLong).expand({kBimaskCandidates, 12})));
}

// The authors' NMConv on x [3, 5, 16] with the chosen permutation. Each value is a sum of n float32
// products; LibTorch and the authors may sum in different orders, so each may be off by at most n u times
// the sum of the terms' magnitudes, for each of the two, plus a rounding of the decay term.
TEST(BimaskLinear, LayerForwardAndBackwardMatchTheAuthors) {
  const json golden = Golden();
  const json& layer = golden["layer_case"];
  const torch::Tensor w = Tensor(golden["weight_out_x_in"]).requires_grad_(true);
  const torch::Tensor x = Tensor(layer["x_BxTxC"]).requires_grad_(true);
  const torch::Tensor b = Tensor(layer["bias"]).requires_grad_(true);
  const torch::Tensor g = Tensor(layer["upstream_grad"]);
  const torch::Tensor forward = BimaskForwardMask(w, kTwoFour);
  const torch::Tensor permutation = Tensor(layer["permute_idx"], torch::kLong);
  const torch::Tensor backward = BimaskBackwardMask(w, forward, permutation, kTwoFour);
  ExpectEqualMasks(forward, Tensor(layer["forward_mask_out_x_in"]), "layer forward mask");
  ExpectEqualMasks(backward, Tensor(layer["backward_mask_out_x_in"]), "layer backward mask");

  const torch::Tensor y = BimaskLinear(x, w, b, forward, backward, 2e-4);
  y.backward(g);
  const int64_t batch = x.size(0), tokens = x.size(0) * x.size(1), in = w.size(1), out = w.size(0);
  const torch::Tensor ad = x.detach().abs().to(torch::kDouble), gd = g.abs().to(torch::kDouble);
  const torch::Tensor wf = (w.detach() * forward).abs().to(torch::kDouble);
  const torch::Tensor wb = (w.detach() * backward).abs().to(torch::kDouble);
  ExpectWithin(y, Tensor(layer["output"], torch::kDouble),
               2 * (in + 1) * kU * (ad.matmul(wf.t()) + b.detach().abs().to(torch::kDouble)), "output");
  ExpectWithin(x.grad(), Tensor(layer["input_grad"], torch::kDouble), 2 * out * kU * gd.matmul(wb),
               "input gradient");
  const torch::Tensor decay = 2e-4 * batch * ((1 - forward) * w.detach()).abs().to(torch::kDouble);
  const torch::Tensor products = gd.reshape({tokens, out}).t().matmul(ad.reshape({tokens, in}));
  // The authors add the decay to each sample's [in, out] gradient and sum the B of them: B more roundings.
  ExpectWithin(w.grad(), Tensor(layer["weight_grad"], torch::kDouble),
               2 * (tokens + batch + 1) * kU * (products + decay), "weight gradient");
  ExpectWithin(b.grad(), Tensor(layer["bias_grad"], torch::kDouble),
               2 * tokens * kU * gd.reshape({tokens, out}).sum(0), "bias gradient");
  // The decay is lambda * B on the pruned weights (the golden's observed multiplier is B = 3 to 4 digits).
  const torch::Tensor dense = Tensor(layer["dense_part_sum_b_t(g^T x)"], torch::kDouble);
  const torch::Tensor pruned = forward.eq(0);
  const double multiplier = ((w.grad().to(torch::kDouble) - dense) / (2e-4 * w.detach().to(torch::kDouble)))
                                .masked_select(pruned)
                                .mean()
                                .item<double>();
  EXPECT_NEAR(multiplier, layer["batch_B"].get<double>(), 1e-2);
}

std::shared_ptr<ClassifierImpl> TinyVit() {
  auto arch = LookupModel("vit_nano_patch7_28");
  EXPECT_TRUE(arch.ok());
  return CreateModel(*arch);
}

SparsityConfig Bimask(int refresh) {
  SparsityConfig config;
  config.sparsity_type = SparsityType::kBimask;
  config.locations = {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK, SparsityLocation::kV,
                      SparsityLocation::kO};
  config.permutation_refresh_forwards = refresh;
  return config;
}

double Number(const SparsityReport& report, const std::string& key) {
  for (const auto& [name, value] : report.numbers) {
    if (name == key) return value;
  }
  return -1.0;
}

NamedTensors Find(const NamedTensors& state, const std::string& prefix) {
  NamedTensors out;
  for (const auto& kv : state) {
    if (kv.first.rfind(prefix, 0) == 0) out.push_back(kv);
  }
  return out;
}

// Every forward counts, evaluation included; the permutation changes only at calls 0, I, 2I, ...; the
// masks follow W at every forward; a checkpoint's counters and permutations restore the same layers.
TEST(BimaskMethod, CountsForwardCallsAndSearchesEveryI) {
  torch::manual_seed(3);
  auto model = TinyVit();
  auto method = CreateSparsityMethod(Bimask(3), *model, SparsityMethodOptions(1, 10).seed(4));
  ASSERT_TRUE(method.ok()) << method.status();
  const torch::Tensor images = torch::randn({2, 1, 28, 28});
  std::vector<torch::Tensor> permutations;
  for (int call = 0; call < 7; ++call) {
    (*method)->BeginStep(0, call);
    if (call % 2 == 1) {
      torch::NoGradGuard no_grad;  // An evaluation forward counts too.
      model->forward(images);
    } else {
      {
        torch::NoGradGuard no_grad;  // W moves between forwards, as under an optimizer.
        for (torch::Tensor& p : model->parameters()) p.add_(torch::randn_like(p) * 0.3);
      }
      model->forward(images).sum().backward();
    }
    permutations.push_back(
        Find((*method)->StateDict(), "bimask_permutation/blocks.0.mlp.fc1")[0].second.clone());
    EXPECT_EQ(Number((*method)->Report(call, false), "bimask_forward_calls"), call + 1);
  }
  // Searched at calls 0, 3, 6: the same permutation within [0, 3) and [3, 6).
  EXPECT_TRUE(permutations[1].equal(permutations[0]) && permutations[2].equal(permutations[0]));
  EXPECT_TRUE(permutations[4].equal(permutations[3]) && permutations[5].equal(permutations[3]));
  EXPECT_FALSE(permutations[3].equal(permutations[0]));
  // The diagnostics read the last forward's mask: N:M of the current W.
  auto fc1 = model->named_modules()["blocks.0.mlp.fc1"];
  const torch::Tensor& w = std::dynamic_pointer_cast<SparseLinearImpl>(fc1)->weight;
  ExpectEqualMasks((*method)->HeldMask("blocks.0.mlp.fc1"), BimaskForwardMask(w, kTwoFour), "held");
  const double density = Number((*method)->Report(7, false), "backward_mask_density");
  EXPECT_GT(density, 0.25);
  EXPECT_LE(density, 0.5);
  // FLOPs: forward and input gradient N:M, weight gradient dense.
  const GemmDensity gemm = (*method)->ForwardDensity();
  EXPECT_EQ(gemm.ff, 0.5);
  EXPECT_EQ(gemm.qkv, 0.5);
  EXPECT_EQ(gemm.weight_gradient, 1.0);

  // A second model restored from the state continues exactly: same output, same next search.
  const NamedTensors state = (*method)->StateDict();
  auto copy = TinyVit();
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < model->parameters().size(); ++i)
      copy->parameters()[i].copy_(model->parameters()[i]);
  }
  auto restored = CreateSparsityMethod(Bimask(3), *copy, SparsityMethodOptions(1, 10).seed(4));
  ASSERT_TRUE(restored.ok());
  ASSERT_TRUE((*restored)->LoadStateDict(state).ok());
  for (int call = 7; call < 10; ++call) {
    (*method)->BeginStep(0, call);
    (*restored)->BeginStep(0, call);
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(model->forward(images).equal(copy->forward(images))) << call;
  }
  EXPECT_TRUE((*method)->StateDict()[1].second.equal((*restored)->StateDict()[1].second));
  // A state of the wrong size is refused by name.
  EXPECT_FALSE((*restored)->LoadStateDict({}).ok());
}

}  // namespace
}  // namespace nmsparse
