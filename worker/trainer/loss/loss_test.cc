// timm's losses and Mixup/CutMix against timm itself: worker/trainer/testdata/timm_loss.txt is printed by
// tools/timm_loss_golden.py (checked against PyPI timm by tools/check_timm_goldens.sh). Exact where the
// arithmetic is the same float32 operations (targets, mixed images); 1e-6 relative for the losses (float32
// reductions may sum in another order); KS tests where the random streams differ.
#include "worker/trainer/loss/loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/two_sample_ks.h"
#include "schemas/experiment_config.h"
#include "worker/trainer/loss/mixup.h"

namespace nmsparse {
namespace {

constexpr int64_t kB = 4, kK = 5;

torch::Tensor FixedLogits() {
  auto x = torch::empty({kB, kK});
  for (int64_t i = 0; i < kB; ++i)
    for (int64_t k = 0; k < kK; ++k) x[i][k] = 3.0 * std::sin(1.3 * i + 0.7 * k);
  return x;
}

torch::Tensor FixedImages() {
  auto x = torch::empty({4, 1, 6, 6});
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t c = 0; c < 6; ++c) x[b][0][y][c] = static_cast<float>(100 * b + 10 * y + c);
  return x;
}

torch::Tensor Labels() { return torch::tensor({1, 3, 0, 4}, torch::kLong); }

std::vector<std::string> GoldenLines() {
  std::ifstream in("worker/trainer/testdata/timm_loss.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_FALSE(lines.empty()) << "worker/trainer/testdata/timm_loss.txt missing";
  return lines;
}

// The words of the golden lines that start with `tag` (the tag dropped).
std::vector<std::vector<std::string>> Golden(const std::string& tag) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : GoldenLines()) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first != tag) continue;
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    out.push_back(w);
  }
  return out;
}

std::vector<float> Floats(const std::vector<std::string>& w, size_t from, size_t to) {
  std::vector<float> out;
  for (size_t i = from; i < to; ++i) out.push_back(std::stof(w[i]));
  return out;
}

std::vector<float> Values(const torch::Tensor& t) {
  auto c = t.contiguous().to(torch::kFloat32);
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(LossTest, LossesEqualTimms) {
  const auto x = FixedLogits();
  const auto labels = Labels();
  const auto dense = MixupTarget(labels, kK, 0.7, 0.1);
  BceOptions s01{0.1, std::nullopt, false};
  BceOptions s01_t{0.1, 0.2, false};
  BceOptions s01_sum{0.1, std::nullopt, true};
  BceOptions plain{0.1, std::nullopt, false};  // timm's default smoothing: unused on dense targets.
  BceOptions plain_t{0.1, 0.2, false};
  BceOptions plain_sum{0.1, std::nullopt, true};
  const std::map<std::string, torch::Tensor> ours = {
      {"cross_entropy", torch::cross_entropy_loss(x, labels)},
      {"label_smoothing_0.1", LabelSmoothingCrossEntropy(x, labels, 0.1)},
      {"soft_target_dense", SoftTargetCrossEntropy(x, dense)},
      {"bce_labels_s0.1", BinaryCrossEntropy(x, labels, s01)},
      {"bce_labels_s0.1_t0.2", BinaryCrossEntropy(x, labels, s01_t)},
      {"bce_labels_s0.1_sum", BinaryCrossEntropy(x, labels, s01_sum)},
      {"bce_dense", BinaryCrossEntropy(x, dense, plain)},
      {"bce_dense_t0.2", BinaryCrossEntropy(x, dense, plain_t)},
      {"bce_dense_sum", BinaryCrossEntropy(x, dense, plain_sum)},
  };
  const auto golden = Golden("loss");
  ASSERT_EQ(golden.size(), ours.size());
  for (const auto& w : golden) {
    const double want = std::stod(w[1]);
    const double got = ours.at(w[0]).item<double>();
    EXPECT_NEAR(got, want, 1e-6 * std::abs(want)) << w[0];
  }
}

OptimizerConfig Recipe(double mixup, double smoothing, bool bce) {
  OptimizerConfig o;
  o.mixup_alpha = mixup;
  o.label_smoothing = smoothing;
  o.bce_loss = bce;
  return o;
}

// timm's train.py: mixup_active -> BCE or soft target; elif smoothing -> BCE or label smoothing; else CE.
TEST(LossTest, ChoiceFollowsTrainPy) {
  using K = TrainLoss::Kind;
  EXPECT_EQ(TrainLoss(Recipe(0.8, 0.1, false)).kind(), K::kSoftTarget);
  EXPECT_EQ(TrainLoss(Recipe(0.8, 0.1, true)).kind(), K::kBinaryCrossEntropy);
  EXPECT_EQ(TrainLoss(Recipe(0.0, 0.1, false)).kind(), K::kLabelSmoothing);
  EXPECT_EQ(TrainLoss(Recipe(0.0, 0.1, true)).kind(), K::kBinaryCrossEntropy);
  EXPECT_EQ(TrainLoss(Recipe(0.0, 0.0, true)).kind(), K::kCrossEntropy);
  EXPECT_EQ(TrainLoss(Recipe(0.0, 0.0, false)).kind(), K::kCrossEntropy);
  OptimizerConfig cutmix_only = Recipe(0.0, 0.0, false);
  cutmix_only.cutmix_alpha = 1.0;
  EXPECT_TRUE(TrainLoss(cutmix_only).dense_targets());
  OptimizerConfig minmax_only = Recipe(0.0, 0.0, false);
  minmax_only.cutmix_min = 0.2;
  minmax_only.cutmix_max = 0.8;
  EXPECT_TRUE(TrainLoss(minmax_only).dense_targets());
  EXPECT_EQ(MixupOptionsFrom(minmax_only, 10).cutmix_alpha, 1.0);  // timm forces it.
  // With mixup, BCE takes the mixed targets unsmoothed (smoothing is in them): bce_dense above.
  const auto x = FixedLogits();
  const auto dense = MixupTarget(Labels(), kK, 0.7, 0.1);
  OptimizerConfig bce = Recipe(0.8, 0.1, true);
  EXPECT_TRUE(torch::equal(TrainLoss(bce)(x, dense), BinaryCrossEntropy(x, dense, BceOptions{})));
}

TEST(LossTest, MixupTargetEqualsTimmsExactly) {
  const auto golden = Golden("target");
  ASSERT_EQ(golden.size(), 3u);
  for (const auto& w : golden) {
    const auto got = MixupTarget(Labels(), kK, std::stod(w[0]), std::stod(w[1]));
    EXPECT_EQ(Values(got), Floats(w, 2, w.size())) << "lam " << w[0];
  }
  const auto elem = Golden("target_elem");
  ASSERT_EQ(elem.size(), 1u);
  const auto& w = elem[0];
  const auto lam = torch::tensor(Floats(w, 0, 4)).unsqueeze(1);
  EXPECT_EQ(Values(MixupTarget(Labels(), kK, lam, std::stod(w[4]))), Floats(w, 5, w.size()));
}

// Replays timm's recorded numpy draws, per kind in call order.
class ReplayRandom : public MixupRandom {
 public:
  ReplayRandom() : MixupRandom(0) {}
  std::deque<double> uniform, beta;
  std::deque<int64_t> ints;
  double Uniform() override { return Pop(uniform); }
  double Beta(double) override { return Pop(beta); }
  int64_t Int(int64_t, int64_t) override { return Pop(ints); }

 private:
  template <typename T>
  T Pop(std::deque<T>& q) {
    EXPECT_FALSE(q.empty()) << "more draws than timm made";
    if (q.empty()) return T{};
    T v = q.front();
    q.pop_front();
    return v;
  }
};

TEST(MixupTest, CutmixBoxesAndLambdaEqualTimms) {
  for (const auto& w : Golden("bbox")) {  // h w lam cy cx -> yl yh xl xh lam
    ReplayRandom rng;
    rng.ints = {std::stoll(w[3]), std::stoll(w[4])};
    MixupOptions o;
    auto [box, lam] = CutmixBoxAndLam(std::stoll(w[0]), std::stoll(w[1]), std::stod(w[2]), o, rng);
    EXPECT_EQ(box, (CutBox{std::stoll(w[6]), std::stoll(w[7]), std::stoll(w[8]), std::stoll(w[9])}));
    EXPECT_EQ(lam, std::stod(w[10]));
    EXPECT_TRUE(rng.ints.empty());
  }
  for (const auto& w : Golden("bbox_minmax")) {  // h w min max d1..d4 -> yl yu xl xu lam
    ReplayRandom rng;
    for (int i = 4; i < 8; ++i) rng.ints.push_back(std::stoll(w[i]));
    MixupOptions o;
    o.cutmix_minmax = std::make_pair(std::stod(w[2]), std::stod(w[3]));
    auto [box, lam] = CutmixBoxAndLam(std::stoll(w[0]), std::stoll(w[1]), 0.5, o, rng);
    EXPECT_EQ(box, (CutBox{std::stoll(w[9]), std::stoll(w[10]), std::stoll(w[11]), std::stoll(w[12])}));
    EXPECT_EQ(lam, std::stod(w[13]));
  }
}

MixupOptions ModeOptions(const std::string& name) {
  MixupOptions o;
  o.label_smoothing = 0.1;
  o.num_classes = kK;
  if (name == "batch_mixup") {
    o.mixup_alpha = 0.8;
  } else if (name == "batch_cutmix") {
    o.mixup_alpha = 0.0;
    o.cutmix_alpha = 1.0;
  } else if (name == "batch_switch") {
    o.mixup_alpha = 0.8;
    o.cutmix_alpha = 1.0;
  } else if (name == "pair_both") {
    o.mixup_alpha = 0.8;
    o.cutmix_alpha = 1.0;
    o.mode = "pair";
  } else if (name == "elem_both") {
    o.mixup_alpha = 0.8;
    o.cutmix_alpha = 1.0;
    o.prob = 0.7;
    o.mode = "elem";
  } else if (name == "elem_minmax") {
    o.mixup_alpha = 0.0;
    o.cutmix_alpha = 1.0;
    o.cutmix_minmax = std::make_pair(0.2, 0.8);
    o.mode = "elem";
  }
  return o;
}

// Batch, pair and elem modes on timm's own draws: the same images and targets, bit for bit.
TEST(MixupTest, ModesEqualTimmsOnTheSameDraws) {
  const auto lines = GoldenLines();
  int checked = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("mode ", 0) != 0) continue;
    std::istringstream head(lines[i]);
    std::string tag, name;
    head >> tag >> name;
    ReplayRandom rng;
    const auto words = [&](size_t at) {
      std::istringstream in(lines[at]);
      std::vector<std::string> w;
      for (std::string s; in >> s;) w.push_back(s);
      return w;
    };
    const auto uniform = words(i + 1), beta = words(i + 2), ints = words(i + 3);  // "draws KIND v..."
    for (size_t k = 2; k < uniform.size(); ++k) rng.uniform.push_back(std::stod(uniform[k]));
    for (size_t k = 2; k < beta.size(); ++k) rng.beta.push_back(std::stod(beta[k]));
    for (size_t k = 2; k < ints.size(); ++k) rng.ints.push_back(static_cast<int64_t>(std::stod(ints[k])));
    const auto images_w = words(i + 4);
    const auto targets_w = words(i + 5);
    auto images = FixedImages();
    const auto targets = ApplyMixup(images, Labels(), ModeOptions(name), true, rng);
    EXPECT_EQ(Values(images), Floats(images_w, 1, images_w.size())) << lines[i];
    EXPECT_EQ(Values(targets), Floats(targets_w, 1, targets_w.size())) << lines[i];
    EXPECT_TRUE(rng.uniform.empty() && rng.beta.empty() && rng.ints.empty()) << lines[i] << ": draws left";
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

// After mixup_off_epoch timm sets mixup_enabled = false: no draws, images untouched, smoothed targets.
TEST(MixupTest, OffEpochMixesNothing) {
  OptimizerConfig o;
  o.mixup_alpha = 0.8;
  o.mixup_off_epoch = 3;
  EXPECT_TRUE(MixupEnabled(o, 2));
  EXPECT_FALSE(MixupEnabled(o, 3));
  o.mixup_off_epoch = 0;
  EXPECT_TRUE(MixupEnabled(o, 1000));
  for (const std::string mode : {"batch", "pair", "elem"}) {
    MixupOptions m = ModeOptions("elem_both");
    m.mode = mode;
    ReplayRandom rng;  // Empty: any draw fails the test.
    auto images = FixedImages();
    const auto targets = ApplyMixup(images, Labels(), m, false, rng);
    EXPECT_TRUE(torch::equal(images, FixedImages())) << mode;
    EXPECT_TRUE(torch::equal(targets, SmoothedTargets(Labels(), kK, 0.1))) << mode;
  }
}

// As the golden file writes them (%.6g), so that atoms of discrete distributions coincide.
double Rounded(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::stod(buf);
}

std::vector<double> Sample(const std::string& name) {
  for (const auto& w : Golden("sample")) {
    if (w[0] != name) continue;
    std::vector<double> out;
    for (size_t i = 1; i < w.size(); ++i) out.push_back(std::stod(w[i]));
    return out;
  }
  ADD_FAILURE() << "no sample " << name;
  return {};
}

// The lambdas and box areas of our random stream against 10^4 of timm's numpy draws. Both samples are fixed
// (seeded), so the test cannot flake. Threshold: the two-sample KS critical value at alpha = 1e-6,
// sqrt(-ln(alpha / 2) / 2) * sqrt((n + m) / (n m)) = 2.694 * sqrt(2e-4) = 0.0381 for n = m = 10^4; a wrong
// distribution (Beta(1, 1) for Beta(0.8, 0.8)) is far above it, which the test checks too.
TEST(MixupTest, LambdaAndBoxAreaDistributionsMatchTimms) {
  constexpr int kN = 10000;
  constexpr double kCritical = 0.0381;
  MixupOptions mix;
  mix.mixup_alpha = 0.8;
  MixupOptions cut;
  cut.mixup_alpha = 0.0;
  cut.cutmix_alpha = 1.0;
  MixupOptions minmax = cut;
  minmax.cutmix_minmax = std::make_pair(0.2, 0.8);
  MixupRandom rng(2024);
  std::vector<double> mix_lam, cut_lam, minmax_lam, wrong;
  for (int i = 0; i < kN; ++i) {
    mix_lam.push_back(Rounded(ParamsPerBatch(mix, rng).lam[0]));
    const double lam = ParamsPerBatch(cut, rng).lam[0];
    cut_lam.push_back(Rounded(CutmixBoxAndLam(32, 32, lam, cut, rng).second));
    minmax_lam.push_back(Rounded(CutmixBoxAndLam(32, 32, 0.5, minmax, rng).second));
    wrong.push_back(rng.Beta(1.0));
  }
  EXPECT_LT(KsStatistic(mix_lam, Sample("mixup_lam_0.8")), kCritical);
  EXPECT_LT(KsStatistic(cut_lam, Sample("cutmix_lam_32")), kCritical);
  EXPECT_LT(KsStatistic(minmax_lam, Sample("cutmix_minmax_lam_32")), kCritical);
  EXPECT_GT(KsStatistic(wrong, Sample("mixup_lam_0.8")), kCritical);
}

}  // namespace
}  // namespace nmsparse
