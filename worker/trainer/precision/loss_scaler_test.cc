// The loss scaler against torch.amp.GradScaler itself: worker/trainer/testdata/torch_grad_scaler.txt is
// printed by tools/torch_grad_scaler_golden.py (checked against PyPI torch by tools/check_timm_goldens.sh).
// Exact: every scale is a power of two times the initial one and the tracker an integer, and unscaling is one
// float32 multiply by the same float32 inverse in both.
#include "worker/trainer/precision/loss_scaler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmsparse {
namespace {

struct Sequence {
  int64_t interval = 0;
  std::string steps;
  std::vector<double> scales;
  std::vector<int64_t> trackers;
};

template <typename T>
std::vector<T> Numbers(std::istringstream& in) {
  std::vector<T> out;
  for (T v; in >> v;) out.push_back(v);
  return out;
}

std::vector<Sequence> GoldenSequences(std::vector<double>* unscaled) {
  std::ifstream in("worker/trainer/testdata/torch_grad_scaler.txt");
  EXPECT_TRUE(in.good()) << "worker/trainer/testdata/torch_grad_scaler.txt missing";
  std::vector<Sequence> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "sequence") {
      out.emplace_back();
      words >> out.back().interval >> out.back().steps;
    } else if (tag == "scales") {
      out.back().scales = Numbers<double>(words);
    } else if (tag == "trackers") {
      out.back().trackers = Numbers<int64_t>(words);
    } else if (tag == "unscale") {
      double scale;
      words >> scale;
      *unscaled = Numbers<double>(words);
    }
  }
  return out;
}

float GradientOf(char kind) {
  if (kind == 'I') return std::numeric_limits<float>::infinity();
  if (kind == 'N') return std::numeric_limits<float>::quiet_NaN();
  return 1.0f;
}

TEST(LossScalerTest, ScaleAndTrackerFollowGradScalerOverInfAndFiniteSteps) {
  std::vector<double> unscaled;
  const std::vector<Sequence> sequences = GoldenSequences(&unscaled);
  ASSERT_EQ(sequences.size(), 2u);
  for (const Sequence& s : sequences) {
    ASSERT_EQ(s.scales.size(), s.steps.size());
    LossScalerOptions options;
    options.growth_interval = s.interval;
    LossScaler scaler(options, torch::kCPU);
    auto param = torch::zeros({3}, torch::requires_grad());
    float skipped = 0;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      param.mutable_grad() = torch::Tensor();
      scaler.Scale((param * torch::tensor({0.5f, -3.0f, GradientOf(s.steps[i])})).sum()).backward();
      scaler.Unscale({param});
      EXPECT_EQ(scaler.found_inf().item<float>(), s.steps[i] == 'F' ? 0.0f : 1.0f) << "step " << i;
      scaler.Update();
      skipped += s.steps[i] == 'F' ? 0 : 1;
      ASSERT_EQ(scaler.skipped_steps().item<float>(), skipped);
      ASSERT_EQ(scaler.scale().item<double>(), s.scales[i]) << "interval " << s.interval << ", step " << i;
      ASSERT_EQ(scaler.growth_tracker().item<int64_t>(), s.trackers[i])
          << "interval " << s.interval << ", step " << i;
    }
  }
}

TEST(LossScalerTest, UnscalesAsGradScalerDoes) {
  std::vector<double> unscaled;
  GoldenSequences(&unscaled);
  ASSERT_EQ(unscaled.size(), 4u);
  LossScalerOptions options;
  options.init_scale = 3.0;
  LossScaler scaler(options, torch::kCPU);
  auto param = torch::zeros({4}, torch::requires_grad());
  scaler.Scale((param * torch::tensor({1.0f, -7.0f, 0.1f, 65504.0f})).sum()).backward();
  scaler.Unscale({param});
  // The golden's %.9g text identifies a float32 exactly once read back as a float.
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(param.grad()[i].item<float>(), static_cast<float>(unscaled[i])) << i;
  EXPECT_EQ(scaler.found_inf().item<float>(), 0.0f);
}

TEST(LossScalerTest, DefaultsAreGradScalers) {
  const LossScalerOptions options;
  EXPECT_EQ(options.init_scale, 65536.0);
  EXPECT_EQ(options.growth_factor, 2.0);
  EXPECT_EQ(options.backoff_factor, 0.5);
  EXPECT_EQ(options.growth_interval, 2000);
}

TEST(LossScalerTest, StateRoundTripsExactly) {
  LossScalerOptions options;
  options.growth_interval = 3;
  LossScaler scaler(options, torch::kCPU);
  scaler.Load(torch::tensor({1024.0, 2.0, 5.0}, torch::kDouble));
  scaler.Update();  // The third clean step: grows.
  EXPECT_EQ(scaler.scale().item<float>(), 2048.0f);
  EXPECT_EQ(scaler.growth_tracker().item<int>(), 0);
  EXPECT_EQ(scaler.skipped_steps().item<float>(), 5.0f);
  LossScaler restored(options, torch::kCPU);
  restored.Load(scaler.State());
  EXPECT_TRUE(torch::equal(restored.State(), scaler.State()));
  EXPECT_THROW(restored.Load(torch::zeros({2})), std::invalid_argument);
}

}  // namespace
}  // namespace nmsparse
