// The 2:4 primitives against the golden files of the authors' code (testdata/recipes/, README there): masks
// exact; values at the files' tolerances (rtol 1e-6 element-wise fp32); MVUE by its properties, never by
// comparing samples (our random stream is not torch's).
#include "worker/sparsity/two_four.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/trainer/optim/lion.h"

namespace nmsparse {
namespace {

using nlohmann::json;

json Golden(const std::string& name) {
  const std::string path = "worker/sparsity/testdata/recipes/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path << " missing";
  return in.good() ? json::parse(in) : json::object();
}

// A nested list of numbers as a tensor (float32 values stored exactly as doubles).
torch::Tensor ToTensor(const json& nested, torch::Dtype dtype = torch::kFloat) {
  std::vector<int64_t> shape;
  for (const json* level = &nested; level->is_array(); level = &(*level)[0]) shape.push_back(level->size());
  std::vector<double> flat;
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_array()) {
      for (const json& e : j) walk(e);
    } else {
      flat.push_back(j.get<double>());
    }
  };
  walk(nested);
  return torch::tensor(flat, torch::kDouble).to(dtype).reshape(shape);
}

void ExpectExact(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  EXPECT_TRUE(torch::equal(actual.to(torch::kDouble), expected.to(torch::kDouble)))
      << what << ": " << actual.to(torch::kDouble).ne(expected.to(torch::kDouble)).sum().item<int64_t>()
      << " entries differ";
}

// |a - e| <= rtol |e| element-wise, with atol for expected zeros.
void ExpectClose(const torch::Tensor& actual, const torch::Tensor& expected, double rtol, double atol,
                 const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const torch::Tensor a = actual.to(torch::kDouble), e = expected.to(torch::kDouble);
  const torch::Tensor bad = (a - e).abs().gt(e.abs() * rtol + atol);
  EXPECT_EQ(bad.sum().item<int64_t>(), 0) << what << ": max |diff| " << (a - e).abs().max().item<double>();
}

torch::Generator Seeded(uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

// --- hard 2:4 -------------------------------------------------------------------------------------------

TEST(HardTwoFour, MatchesTheAuthorsMasksAndOutputsIncludingTies) {
  const json golden = Golden("golden_sparse24.json");
  ASSERT_FALSE(golden.empty());
  for (const auto& [name, c] : golden.at("cases").items()) {
    const torch::Tensor x = ToTensor(c.at("input"));
    const torch::Tensor mask = HardTwoFourMask(x);
    // The torch twin (unstable argsort) matched the rule on CPU in every case; the rule is the triton one.
    ExpectExact(mask, ToTensor(c.at("triton_sparse24_mask")), name + " triton mask");
    ExpectExact(mask, ToTensor(c.at("mask")), name + " legacy mask");
    // W * mask multiplies by 0 or 1: exact.
    ExpectExact(x * mask, ToTensor(c.at("output")), name + " output");
  }
}

TEST(HardTwoFour, HigherIndexWinsAmongEqualMagnitudes) {
  const torch::Tensor x = torch::tensor({1.f, -1.f, 1.f, 1.f, 2.f, 0.f, 0.f, 0.f});
  ExpectExact(HardTwoFourMask(x), torch::tensor({0.f, 0.f, 1.f, 1.f, 1.f, 0.f, 0.f, 1.f}), "ties");
}

// --- transposable 2:4 -------------------------------------------------------------------------------------

// The index (in `patterns`) of each 4x4 tile's pattern of `mask` [R, C], row-major over tiles.
std::vector<int64_t> TilePatternIndex(const torch::Tensor& mask, const torch::Tensor& patterns) {
  const int64_t r = mask.size(0), c = mask.size(1);
  const torch::Tensor tiles = mask.view({r / 4, 4, c / 4, 4}).permute({0, 2, 1, 3}).reshape({-1, 16});
  std::vector<int64_t> index;
  for (int64_t t = 0; t < tiles.size(0); ++t) {
    const torch::Tensor hit = patterns.eq(tiles[t]).all(1).nonzero();
    index.push_back(hit.numel() == 1 ? hit.item<int64_t>() : -1);
  }
  return index;
}

TEST(TransposableTwoFour, PatternOrderIsTheAuthors) {
  const json golden = Golden("golden_transposable24.json");
  ASSERT_FALSE(golden.empty());
  ExpectExact(TransposableTwoFourPatterns(TransposableOrder::kAuthors),
              ToTensor(golden.at("pattern_order_legacy")), "pattern order");
}

TEST(TransposableTwoFour, MasksScoresAndTieBreaksMatchTheAuthors) {
  const json golden = Golden("golden_transposable24.json");
  ASSERT_FALSE(golden.empty());
  const torch::Tensor patterns = TransposableTwoFourPatterns(TransposableOrder::kAuthors);
  for (const auto& [name, c] : golden.at("cases").items()) {
    const torch::Tensor x = ToTensor(c.at("input"));
    const torch::Tensor mask = AuthorsTransposableMask(x);
    if (!c.contains("mask")) {  // The 32x64 case: the authors' torch and triton masks, equal.
      ExpectExact(mask, ToTensor(c.at("legacy_mask")), name + " legacy mask");
      ExpectExact(mask, ToTensor(c.at("triton_mask")), name + " triton mask");
      continue;
    }
    ExpectExact(mask, ToTensor(c.at("mask")), name + " mask");
    ExpectExact(x * mask, ToTensor(c.at("output")), name + " output");
    // Every tile's kept |w| is the best of the 90 patterns: our score is 8 fp32 additions, the authors' a
    // fp32 matmul; both are within 8 ulp of the exact sum, so rtol 1e-6 of the fp64 optimum.
    const int64_t rows = x.size(0), cols = x.size(1);
    const torch::Tensor kept =
        (x.to(torch::kDouble).abs() * mask.to(torch::kDouble)).view({rows / 4, 4, cols / 4, 4}).sum({1, 3});
    ExpectClose(kept.reshape({-1}), ToTensor(c.at("block_best_score_f64"), torch::kDouble).reshape({-1}),
                1e-6, 0, name + " tile score");
    // Ties (ones_8x8, ties_4x8 have several optimal patterns) go to the first in the authors' order.
    const std::vector<int64_t> want = c.at("block_chosen_pattern_index").get<std::vector<int64_t>>();
    EXPECT_EQ(TilePatternIndex(mask, patterns), want) << name;
  }
}

// Ties beyond the goldens' two tie cases: tiles |w| = P_i + P_j for every pair of patterns, and 2000 random
// tiles of integers 0..2 (integer scores are exact, so ties are real ties). The mask must be the first
// optimal pattern of the authors' order. (Observed: the accelerated layers' enumeration order, which differs
// from the authors' only in placing row choice 0110 before 1001, picks the same pattern on all of them.)
TEST(TransposableTwoFour, TiesGoToTheFirstOptimalPatternInTheAuthorsOrder) {
  const torch::Tensor authors = TransposableTwoFourPatterns(TransposableOrder::kAuthors);
  std::vector<torch::Tensor> tiles;
  for (int64_t i = 0; i < 90; ++i) {
    for (int64_t j = i + 1; j < 90; ++j) tiles.push_back(authors[i] + authors[j]);
  }
  const torch::Tensor random = torch::randint(0, 3, {2000, 16}, Seeded(8)).to(torch::kFloat);
  for (int64_t t = 0; t < random.size(0); ++t) tiles.push_back(random[t]);
  const torch::Tensor flat = torch::stack(tiles);  // [tiles, 16], each a row-major 4x4 tile.
  const torch::Tensor w = flat.view({-1, 4, 4}).permute({1, 0, 2}).reshape({4, -1});  // Side by side.
  const torch::Tensor scores = flat.to(torch::kDouble).matmul(authors.to(torch::kDouble).t());  // Exact.
  const torch::Tensor best = std::get<0>(scores.max(1, true));
  // The lowest optimal index, without argmax's own tie rule.
  const torch::Tensor index = torch::arange(90, torch::kInt64).expand({scores.size(0), 90});
  const torch::Tensor first_optimal =
      std::get<0>(torch::where(scores.eq(best), index, torch::full_like(index, 90)).min(1)).contiguous();
  const std::vector<int64_t> want(first_optimal.data_ptr<int64_t>(),
                                  first_optimal.data_ptr<int64_t>() + first_optimal.numel());
  EXPECT_EQ(TilePatternIndex(AuthorsTransposableMask(w), authors), want);
  EXPECT_GT(scores.eq(best).sum(1).gt(1).sum().item<int64_t>(), 1000) << "too few ties to test the rule";
}

TEST(TransposableTwoFour, TransposeIsTwoFourToo) {
  const torch::Tensor w = torch::randn({16, 32}, Seeded(7));
  const torch::Tensor mask = AuthorsTransposableMask(w);
  EXPECT_TRUE(mask.view({16, 8, 4}).sum(-1).eq(2).all().item<bool>());
  EXPECT_TRUE(mask.t().contiguous().view({32, 4, 4}).sum(-1).eq(2).all().item<bool>());
}

// --- MVUE 2:4 ---------------------------------------------------------------------------------------------

TEST(Mvue, InclusionProbabilitiesAreTheClosedForm) {
  const json golden = Golden("golden_mvue24.json");
  ASSERT_FALSE(golden.empty());
  for (const json& v : golden.at("vectors")) {
    // The golden's closed form is fp64 from the decimal x as a double (0.1, not 0.1f): agreement to rounding.
    const torch::Tensor x = ToTensor(v.at("x"), torch::kDouble).view({1, 4});
    ExpectClose(MvueInclusionProbability(x).view({4}),
                ToTensor(v.at("exact").at("inclusion_prob"), torch::kDouble), 1e-12, 0, "p");
  }
  const json& m = golden.at("matrix_case");
  const torch::Tensor x = ToTensor(m.at("x"));
  ExpectClose(MvueInclusionProbability(x).reshape({-1}),
              ToTensor(m.at("inclusion_prob"), torch::kDouble).reshape({-1}), 1e-12, 0, "matrix p");
}

TEST(Mvue, KeepsTwoOfEveryFourAndScalesByTheInclusionProbability) {
  const torch::Tensor x = torch::randn({6, 24}, Seeded(3));
  const torch::Tensor p = MvueInclusionProbability(x);
  torch::Generator gen = Seeded(11);
  for (int draw = 0; draw < 50; ++draw) {
    const torch::Tensor out = MvueTwoFour(x, gen);
    const torch::Tensor kept = out.ne(0);
    EXPECT_TRUE(kept.view({6, 6, 4}).sum(-1).eq(2).all().item<bool>());  // randn has no zeros.
    // Kept entries are x / p (fp64 division rounded once to fp32).
    ExpectClose(out.masked_select(kept), (x.to(torch::kDouble) / p).masked_select(kept), 1e-7, 0, "x / p");
  }
}

// Over N seeded draws the mean of each entry is within 5 standard errors of sign(x)(|x| + eps), with the
// standard error from the closed-form variance (|x|+eps)^2 (1/p - 1) / N. The draws are bounded, so the mean
// is near normal at N = 20000; a 5-sigma two-sided miss has probability 5.7e-7 per entry, under 1e-4 for the
// 160 entries here. The seed is fixed, so the test is deterministic: the rate says how unlikely it was that a
// correct estimator fails for the seed chosen.
TEST(Mvue, EmpiricalMeanIsTheInputWithinTheVarianceBound) {
  const json golden = Golden("golden_mvue24.json");
  ASSERT_FALSE(golden.empty());
  std::vector<torch::Tensor> rows;
  for (const json& v : golden.at("vectors")) rows.push_back(ToTensor(v.at("x")).view({1, 4}));
  rows.push_back(ToTensor(golden.at("matrix_case").at("x")).view({-1, 4}));
  const torch::Tensor x = torch::cat(rows).view({1, -1});  // 40 groups along one row.
  const int64_t n = 20000;
  const torch::Tensor copies = x.expand({n, x.size(1)}).contiguous();
  const torch::Tensor out = MvueTwoFour(copies, Seeded(1234)).to(torch::kDouble);
  const torch::Tensor a = x.to(torch::kDouble).abs() + kMvueEps;
  const torch::Tensor expectation = x.to(torch::kDouble).sign() * a;
  const torch::Tensor variance = a.square() * (1.0 / MvueInclusionProbability(x) - 1.0);
  const torch::Tensor z = (out.mean(0, true) - expectation).abs() / (variance / n).sqrt().clamp_min(1e-30);
  EXPECT_LT(z.max().item<double>(), 5.0);
  // The authors' own empirical means (same N) are within the same bound: the bound is not loose for them.
  for (const json& v : golden.at("vectors")) {
    const torch::Tensor xv = ToTensor(v.at("x")).view({1, 4});
    const torch::Tensor av = xv.to(torch::kDouble).abs() + kMvueEps;
    const torch::Tensor var = av.square() * (1.0 / MvueInclusionProbability(xv) - 1.0);
    const torch::Tensor zv =
        (ToTensor(v.at("empirical_mean"), torch::kDouble) - xv.to(torch::kDouble).sign() * av).abs() /
        (var / n).sqrt().clamp_min(1e-30);
    EXPECT_LT(zv.max().item<double>(), 5.0);
  }
}

// The frequency of each of the 6 kept pairs against P({i,j}) = t_i a_j/(S-a_i) + t_j a_i/(S-a_j), per
// pattern within 5 binomial standard deviations (+ 5 counts, for patterns of probability ~1e-8 where the
// normal approximation fails) at N = 20000: false-failure rate 5.7e-7 per pattern, under 3e-5 for the 48
// patterns. The seed is fixed, so the test is deterministic.
TEST(Mvue, PatternFrequenciesMatchTheExactProbabilities) {
  const json golden = Golden("golden_mvue24.json");
  ASSERT_FALSE(golden.empty());
  const int64_t n = 20000;
  const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  torch::Generator gen = Seeded(99);
  for (const json& v : golden.at("vectors")) {
    // A kept zero is invisible in the output, and the draw depends on |x| only: sample |x| + 1e-30, which
    // has the same a = |x| + eps to 1e-23 relative and shows every kept entry.
    const torch::Tensor x = ToTensor(v.at("x")).view({1, 4});
    const torch::Tensor probe = x.abs().add(1e-30f);
    const torch::Tensor kept = MvueTwoFour(probe.expand({n, 4}).contiguous(), gen).ne(0).to(torch::kInt64);
    const std::vector<double> want =
        v.at("exact").at("pattern_probs_pairs_in_L24_order").get<std::vector<double>>();
    for (int k = 0; k < 6; ++k) {
      const int64_t count = (kept.select(1, pairs[k][0]) * kept.select(1, pairs[k][1])).sum().item<int64_t>();
      const double sd = std::sqrt(n * want[k] * (1 - want[k]));
      EXPECT_LE(std::fabs(count - n * want[k]), 5 * sd + 5) << v.at("x").dump() << " pair " << k;
    }
  }
}

TEST(Mvue, TokensNotAMultipleOfFourKeepTheirTailExactly) {
  const torch::Tensor x = torch::randn({3, 10}, Seeded(5));
  const torch::Tensor out = MvueTwoFour(x, Seeded(6));
  ExpectExact(out.narrow(1, 8, 2), x.narrow(1, 8, 2), "tail");
  EXPECT_TRUE(out.narrow(1, 0, 8).ne(0).view({3, 2, 4}).sum(-1).eq(2).all().item<bool>());
}

TEST(Mvue, FreshSamplePerStepAndRepeatableFromTheSeed) {
  const torch::Tensor x = torch::randn({8, 64}, Seeded(5));
  torch::Generator gen = Seeded(21);
  const torch::Tensor first = MvueTwoFour(x, gen), second = MvueTwoFour(x, gen);
  EXPECT_FALSE(torch::equal(first, second));
  EXPECT_TRUE(torch::equal(first, MvueTwoFour(x, Seeded(21))));
}

// dW = MVUE(dY^T) X groups 4 consecutive tokens of one output feature: with the same draw it is the
// product of the estimator along tokens, and a token-constant dY column (all 4 tokens of a group equal)
// keeps its group's expectation.
TEST(Mvue, WeightGradientGroupsTokens) {
  const torch::Tensor dy = torch::randn({12, 5}, Seeded(1));  // 12 tokens, 5 outputs.
  const torch::Tensor x = torch::randn({12, 7}, Seeded(2));
  const torch::Tensor dw = MvueWeightGradient(dy, x, Seeded(3));
  ASSERT_EQ(dw.sizes(), (std::vector<int64_t>{5, 7}));
  ExpectClose(dw, MvueTwoFour(dy.t().contiguous(), Seeded(3)).matmul(x), 1e-6, 1e-6, "dW");
  // 11 tokens: the 11th token's contribution is kept whole, not dropped.
  const torch::Tensor dw11 = MvueWeightGradient(dy.narrow(0, 0, 11), x.narrow(0, 0, 11), Seeded(3));
  const torch::Tensor body = MvueWeightGradient(dy.narrow(0, 0, 8), x.narrow(0, 0, 8), Seeded(3));
  ExpectClose(dw11 - body, dy.narrow(0, 8, 3).t().matmul(x.narrow(0, 8, 3)), 1e-5, 1e-5, "tail tokens");
}

// --- masked decay -----------------------------------------------------------------------------------------

TEST(MaskedDecay, FormulaMatchesMaskedAdd) {
  const json golden = Golden("golden_masked_decay.json");
  ASSERT_FALSE(golden.empty());
  torch::Tensor grad = ToTensor(golden.at("grad"));
  AddMaskedDecay(grad, ToTensor(golden.at("W")), ToTensor(golden.at("mask")),
                 golden.at("alpha").get<double>());
  // One fp32 multiply-add per element (FMA or not): within 1 ulp.
  ExpectClose(grad, ToTensor(golden.at("expected_grad")), 1e-6, 1e-12, "grad");
  ExpectClose(grad, ToTensor(golden.at("triton_masked_add_kernel_output")), 1e-6, 1e-12, "triton grad");
}

TEST(MaskedDecay, ScaleBySite) {
  EXPECT_EQ(MaskedDecayScale(MaskedDecaySite::kAfterClip, 256), 1.0);
  EXPECT_EQ(MaskedDecayScale(MaskedDecaySite::kInOptimizer, 256), 1.0);
  EXPECT_EQ(MaskedDecayScale(MaskedDecaySite::kAutograd, 256), 256.0);
}

// Hu et al.'s DeiT Lion: decay 1e-3 with the step's mask, inside the step, before the Lion update.
TEST(MaskedDecay, InsideLionMatchesTheDeitSteps) {
  const json golden = Golden("golden_masked_decay.json");
  ASSERT_FALSE(golden.empty());
  const json& d = golden.at("deit_lion_steps");
  const json& h = d.at("hyper");
  const LionHyper hyper{h.at("lr").get<double>(), h.at("betas")[0].get<double>(),
                        h.at("betas")[1].get<double>(), h.at("weight_decay").get<double>()};
  torch::Tensor w = ToTensor(d.at("initial_weight"));
  torch::Tensor exp_avg = torch::zeros_like(w);
  torch::Tensor previous_mask = ToTensor(d.at("initial_mask"));
  int step = 0;
  for (const json& s : d.at("steps")) {
    ++step;
    const torch::Tensor mask = ToTensor(s.at("mask"));
    torch::Tensor grad = ToTensor(s.at("grad_in"));
    AddMaskedDecay(grad, w, mask, h.at("decay").get<double>());
    ExpectClose(grad, ToTensor(s.at("grad_after_decay")), 1e-6, 1e-12, "grad step " + std::to_string(step));
    LionUpdate(w, grad, exp_avg, hyper);
    // Lion moves each weight by +-lr after the decoupled decay: element-wise fp32, within 1e-6.
    ExpectClose(w, ToTensor(s.at("weight_after")), 1e-6, 1e-9, "weight step " + std::to_string(step));
    if (s.at("flip_sum").get<int64_t>() > 0) {
      EXPECT_EQ(mask.ne(previous_mask).sum().item<int64_t>(), s.at("flip_sum").get<int64_t>()) << step;
    }
    previous_mask = mask;
  }
}

// Hu et al.'s GPT-2 loop: unscale, clip the global norm to 1, then the decay (never clipped), then AdamW.
// The other order gives the golden's other trajectory: the test tells them apart.
TEST(MaskedDecay, AfterClipThenAdamWMatchesNanoGptOrder) {
  const json golden = Golden("golden_masked_decay.json");
  ASSERT_FALSE(golden.empty());
  const json& order = golden.at("nanogpt_v1_step_order");
  const torch::Tensor w0 = ToTensor(golden.at("W"));
  const torch::Tensor mask = ToTensor(golden.at("mask"));
  const double alpha = golden.at("alpha").get<double>();
  for (const bool clip_first : {true, false}) {
    torch::Tensor grad = ToTensor(golden.at("grad"));
    const auto clip = [&] {
      const double norm = grad.to(torch::kDouble).norm().item<double>();
      grad.mul_(std::min(1.0, 1.0 / (norm + 1e-6)));
    };
    if (clip_first) clip();
    AddMaskedDecay(grad, w0, mask, alpha);
    if (!clip_first) clip();
    const json& want = order.at(clip_first ? "v1_order_clip_then_decay" : "wrong_order_decay_then_clip");
    // The clip coefficient is a float32 product in torch (norm in fp32): rtol 1e-6 covers its rounding.
    ExpectClose(grad, ToTensor(want.at("grad_into_optimizer")), 1e-6, 1e-12, "grad into optimizer");
    torch::Tensor w = w0.clone().requires_grad_(true);
    torch::optim::AdamW adamw(
        {w}, torch::optim::AdamWOptions(1.5e-4).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
    w.mutable_grad() = grad;
    adamw.step();
    ExpectClose(w.detach(), ToTensor(want.at("weight_after_adamw_step")), 1e-6, 1e-12, "AdamW step");
  }
}

}  // namespace
}  // namespace nmsparse
