// STEP's update (step_update.h) against golden_step.json: Hu et al.'s AdamW_STEP run on CPU at their commit
// for four configurations (T_max trigger, the switch test with Z_t's mean and geometric mean, no clipping).
// The gradients are the golden's rule (torch.manual_seed(1000 + t) randn for W, 2000 + t for b, times
// decay^t), checked against the recorded ones; the weights, Z_t, the window, the switch step and the frozen
// v are compared step by step.
#include "worker/trainer/optim/step_update.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "worker/sparsity/step_method.h"

namespace nmsparse {
namespace {

using nlohmann::json;

json Golden() {
  std::ifstream in("worker/sparsity/testdata/recipes/golden_step.json");
  EXPECT_TRUE(in.good()) << "golden_step.json missing";
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

// |a - e| <= rtol |e| + atol element-wise.
void ExpectClose(const torch::Tensor& a, const torch::Tensor& e, double rtol, double atol,
                 const std::string& what) {
  ASSERT_EQ(a.sizes(), e.sizes()) << what;
  const torch::Tensor diff = (a.to(torch::kDouble) - e.to(torch::kDouble)).abs();
  EXPECT_TRUE(diff.le(e.to(torch::kDouble).abs() * rtol + atol).all().item<bool>())
      << what << ": max |diff| " << diff.max().item<double>();
}

TEST(StepWindow, RoundsAsTheAuthorsDouble) {
  const json golden = Golden();
  ASSERT_TRUE(golden.contains("T_omega_examples"));
  for (const auto& [beta2, window] : golden.at("T_omega_examples").items()) {
    EXPECT_EQ(StepWindow(std::stod(beta2)), window.get<int64_t>()) << "beta2 " << beta2;
  }
}

// One golden run through StepUpdate over LibTorch's AdamW (the CPU path: unfused, the caller skips on the
// host).
void ExpectRunMatches(const std::string& name) {
  const json golden = Golden();
  const json& run = golden.at("runs").at(name);
  const json& config = run.at("config");
  torch::Tensor w = ToTensor(run.at("w0")).requires_grad_(true);
  torch::Tensor b = ToTensor(run.at("b0")).requires_grad_(true);
  const double beta1 = config.at("betas")[0], beta2 = config.at("betas")[1];
  auto options = torch::optim::AdamWOptions(config.at("lr").get<double>())
                     .betas({beta1, beta2})
                     .eps(config.at("eps").get<double>())
                     .weight_decay(config.at("weight_decay").get<double>());
  torch::optim::AdamW adamw(std::vector<torch::Tensor>{w, b}, options);
  auto step_switch = std::make_shared<StepSwitch>();
  step_switch->weights = {{"w", w}};  // The authors' params with a `mask`: the weight, not the bias.
  step_switch->clipping = !config.at("clipping")[0].is_null();
  if (step_switch->clipping) {
    step_switch->t_min = config.at("clipping")[0];
    step_switch->t_max = config.at("clipping")[1];
  }
  step_switch->z_option = config.at("option");
  StepUpdate update(adamw, /*fused=*/false, step_switch);
  EXPECT_EQ(StepWindow(beta2), run.at("T_omega").get<int64_t>());

  const double decay = config.at("decay");
  const int64_t switch_step = run.at("switch_step");
  size_t next = 0;  // The next recorded step.
  const json& trajectory = run.at("trajectory");
  const int last = trajectory.back().at("t");
  for (int t = 1; t <= last; ++t) {
    torch::manual_seed(1000 + t);
    const torch::Tensor grad_w = torch::randn({4, 8}) * std::pow(decay, t);
    torch::manual_seed(2000 + t);
    const torch::Tensor grad_b = torch::randn({8}) * std::pow(decay, t);
    w.mutable_grad() = grad_w;
    b.mutable_grad() = grad_b;
    update(torch::Tensor());
    if (t == switch_step) {
      ExpectClose(step_switch->frozen[0], ToTensor(run.at("frozen_variance")), 1e-6, 0.0, name + " frozen v");
    }
    EXPECT_EQ(step_switch->sparse.item<double>() > 0.5, t >= switch_step) << name << " t " << t;
    if (next >= trajectory.size() || trajectory[next].at("t") != t) continue;
    const json& expected = trajectory[next++];
    const std::string at = name + " t " + std::to_string(t);
    // The golden's rule reproduces the recorded gradients bit for bit (same generator, same float product).
    ExpectClose(grad_w, ToTensor(expected.at("grad_w")), 0.0, 0.0, at + " grad W");
    ExpectClose(grad_b, ToTensor(expected.at("grad_b")), 0.0, 0.0, at + " grad b");
    // Element-wise fp32 in the authors' operation order: the file's rtol 1e-6.
    ExpectClose(w.detach(), ToTensor(expected.at("w")), 1e-6, 0.0, at + " W");
    ExpectClose(b.detach(), ToTensor(expected.at("b")), 1e-6, 0.0, at + " b");
    const int64_t window_size = step_switch->window.size(0);
    const int64_t filled = std::min<int64_t>(step_switch->pushed.item<int64_t>(), window_size);
    EXPECT_EQ(filled, expected.at("window_len").get<int64_t>()) << at;
    // Z_t and the window's mean are reductions over the 32 weights: the float32 sums may add in another
    // order than the authors' (a relative 32 * 2^-24 < 2e-6 at worst); rtol 1e-5, the files' GEMM bound.
    const double mean = step_switch->window.sum().item<double>() / static_cast<double>(filled);
    EXPECT_NEAR(mean, expected.at("window_mean").get<double>(),
                1e-5 * expected.at("window_mean").get<double>())
        << at;
    EXPECT_EQ(step_switch->sparse.item<double>() > 0.5, expected.at("phase_after_step") == "sparse") << at;
  }
  EXPECT_EQ(next, trajectory.size()) << name;
}

TEST(StepUpdate, MatchesTheAuthorsAtTheTmaxTrigger) { ExpectRunMatches("tmax_trigger"); }
TEST(StepUpdate, MatchesTheAuthorsSwitchTestWithTheMean) { ExpectRunMatches("autoswitch_option1"); }
TEST(StepUpdate, MatchesTheAuthorsSwitchTestWithTheGeometricMean) { ExpectRunMatches("autoswitch_option2"); }
TEST(StepUpdate, MatchesTheAuthorsWithoutClipping) { ExpectRunMatches("no_clipping_given"); }

// A step the loss scaler flags (found_inf 1, decided on the device) counts for nothing in the switch: not
// the step count, not the window. (The unfused AdamW under it does not see the flag: on the CPU its caller
// skips such steps on the host; the fused one skips them itself.)
TEST(StepUpdate, AFlaggedStepLeavesTheSwitchCountersAlone) {
  torch::Tensor w = torch::randn({4, 8}).requires_grad_(true);
  torch::optim::AdamW adamw(std::vector<torch::Tensor>{w}, torch::optim::AdamWOptions(0.01));
  auto step_switch = std::make_shared<StepSwitch>();
  step_switch->weights = {{"w", w}};
  step_switch->t_min = 0;
  step_switch->t_max = 5;
  StepUpdate update(adamw, /*fused=*/false, step_switch);
  w.mutable_grad() = torch::randn({4, 8});
  update(torch::zeros({1}));
  const torch::Tensor window = step_switch->window.clone();
  update(torch::ones({1}));
  EXPECT_EQ(step_switch->steps.item<double>(), 1.0);
  EXPECT_EQ(step_switch->pushed.item<double>(), 1.0);
  EXPECT_TRUE(torch::equal(step_switch->window, window));
  EXPECT_EQ(step_switch->sparse.item<double>(), 0.0);
}

}  // namespace
}  // namespace nmsparse
