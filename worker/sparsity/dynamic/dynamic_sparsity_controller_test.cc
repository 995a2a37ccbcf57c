#include "worker/sparsity/dynamic/dynamic_sparsity_controller.h"

#include <cmath>

#include "gtest/gtest.h"
#include "worker/compat/torch_compat.h"

namespace nmsparse {
namespace {

// A ViT-like parameter set.
struct Model {
  DynamicSparsityController::NamedParameters params;
  std::vector<torch::Tensor> tensors;

  explicit Model(uint64_t seed) {
    torch::manual_seed(seed);
    for (const auto& [name, shape] :
         std::vector<std::pair<std::string, std::vector<int64_t>>>{{"pos_embed", {1, 5, 8}},
                                                                   {"blocks.0.norm1.weight", {8}},
                                                                   {"blocks.0.attn.qkv.weight", {24, 8}},
                                                                   {"blocks.0.mlp.fc1.weight", {32, 8}},
                                                                   {"blocks.0.mlp.fc1.bias", {32}},
                                                                   {"blocks.0.mlp.fc2.weight", {8, 32}}}) {
      auto t = torch::randn(shape).requires_grad_(true);
      params.emplace_back(name, t);
      tensors.push_back(t);
    }
  }
  torch::Tensor Get(const std::string& name) const {
    for (const auto& [n, t] : params) {
      if (n == name) return t;
    }
    return torch::Tensor();
  }
};

DynamicSparsityGroup Group(DynamicAlgorithm algorithm, StepSchedule sparsity,
                           UpdateSchedule update = {5, 0, 0}) {
  DynamicSparsityGroup g;
  g.algorithm = algorithm;
  g.sparsity = sparsity;
  g.update = update;
  return g;
}

StepSchedule Linear(double from, double to, int64_t start, int64_t end) {
  StepSchedule s;
  s.type = StepSchedule::Type::kLinear;
  s.start_value = from;
  s.end_value = to;
  s.start_step = start;
  s.end_step = end;
  return s;
}

// One optimizer step with gradients drawn from `seed`.
void TrainStep(Model& m, torch::optim::Optimizer& opt, DynamicSparsityController& c, int64_t step) {
  torch::manual_seed(1000 + step);
  opt.zero_grad();
  for (auto& t : m.tensors) t.mutable_grad() = torch::randn(t.sizes());
  c.AfterBackward(step);
  opt.step();
  c.AfterOptimizerStep(step);
}

int64_t Zeros(const torch::Tensor& t) { return t.eq(0).sum().item<int64_t>(); }

TEST(DynamicSparsityControllerTest, EveryAlgorithmHoldsTheScheduledSparsityAfterEveryUpdate) {
  for (DynamicAlgorithm algorithm :
       {DynamicAlgorithm::kStatic, DynamicAlgorithm::kGmp, DynamicAlgorithm::kSet, DynamicAlgorithm::kRigl}) {
    Model m(1);
    torch::optim::AdamW opt(m.tensors, torch::optim::AdamWOptions(0.01).weight_decay(0.05));
    const StepSchedule schedule =
        algorithm == DynamicAlgorithm::kGmp ? Linear(0.2, 0.9, 0, 30) : StepSchedule::Constant(0.75);
    auto c = DynamicSparsityController::Create({Group(algorithm, schedule)}, m.params, &opt, 42);
    ASSERT_TRUE(c.ok()) << c.status();
    for (int64_t step = 0; step < 40; ++step) {
      TrainStep(m, opt, **c, step);
      const double target = ScheduleValue(schedule, algorithm == DynamicAlgorithm::kStatic ? 0 : step);
      for (const char* name :
           {"blocks.0.attn.qkv.weight", "blocks.0.mlp.fc1.weight", "blocks.0.mlp.fc2.weight"}) {
        const torch::Tensor mask = (*c)->MaskOf(name), w = m.Get(name);
        ASSERT_TRUE(mask.defined());
        // Pruned weights are zero after every step.
        EXPECT_EQ((w * (1 - mask)).abs().sum().item<double>(), 0.0) << name << " step " << step;
        if ((*c)->Report(step).empty() ||
            !(Group(algorithm, schedule).update.IsUpdateStep(step) || step == 0)) {
          continue;
        }
        EXPECT_EQ(Zeros(mask), std::llround(target * w.numel()))
            << ToString(algorithm) << " " << name << " step " << step;
        EXPECT_GE(Zeros(w), Zeros(mask));
      }
    }
    const auto report = (*c)->Report(39);
    ASSERT_EQ(report.size(), 3u);
    EXPECT_EQ(report[0].name, "blocks.0.attn.qkv.weight");
    EXPECT_EQ(report[0].algorithm, algorithm);
    EXPECT_NEAR(report[0].actual_sparsity, algorithm == DynamicAlgorithm::kGmp ? 0.9 : 0.75, 1.0 / 192);
    EXPECT_DOUBLE_EQ(report[0].target_sparsity, algorithm == DynamicAlgorithm::kGmp ? 0.9 : 0.75);
  }
}

TEST(DynamicSparsityControllerTest, MasksMoveOnlyOnUpdateStepsAndDenseBeforeStart) {
  Model m(2);
  torch::optim::AdamW opt(m.tensors, torch::optim::AdamWOptions(0.01));
  auto c = DynamicSparsityController::Create(
      {Group(DynamicAlgorithm::kRigl, StepSchedule::Constant(0.5), {4, 3, 15})}, m.params, &opt, 1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE((*c)->MaskOf("blocks.0.mlp.fc1.weight").defined());
  EXPECT_DOUBLE_EQ((*c)->Report(0)[0].target_sparsity, 0.0);
  torch::Tensor previous;
  int changes = 0;
  for (int64_t step = 0; step < 24; ++step) {
    TrainStep(m, opt, **c, step);
    const torch::Tensor mask = (*c)->MaskOf("blocks.0.mlp.fc1.weight");
    if (step < 2) {
      EXPECT_FALSE(mask.defined()) << step;
      EXPECT_EQ(Zeros(m.Get("blocks.0.mlp.fc1.weight")), 0);
      continue;
    }
    ASSERT_TRUE(mask.defined()) << step;  // Created after step 2, for step 3 = start.
    if (previous.defined() && !torch::equal(mask, previous)) {
      ++changes;
      EXPECT_TRUE(step == 7 || step == 11) << step;  // 3 + 4k, before stop 15.
    }
    previous = mask.clone();
  }
  EXPECT_EQ(changes, 2);
}

TEST(DynamicSparsityControllerTest, GradientsOfPrunedWeightsAreZero) {
  Model m(3);
  torch::optim::SGD opt(m.tensors, torch::optim::SGDOptions(0.1));
  auto c = DynamicSparsityController::Create({Group(DynamicAlgorithm::kStatic, StepSchedule::Constant(0.5))},
                                             m.params, &opt);
  ASSERT_TRUE(c.ok());
  auto w = m.Get("blocks.0.mlp.fc2.weight");
  w.mutable_grad() = torch::ones(w.sizes());
  (*c)->AfterBackward(0);
  EXPECT_TRUE(torch::equal(w.grad(), (*c)->MaskOf("blocks.0.mlp.fc2.weight")));
  EXPECT_EQ(Zeros(m.Get("blocks.0.mlp.fc1.bias")), 0);  // Not selected by the default filter.
}

TEST(DynamicSparsityControllerTest, OptimizerStateZeroedForPrunedEntries) {
  Model m(4);
  torch::optim::AdamW opt(m.tensors, torch::optim::AdamWOptions(0.01));
  // GMP from 0% to 80%: entries active for a while (non-zero Adam state) get pruned.
  auto c = DynamicSparsityController::Create(
      {Group(DynamicAlgorithm::kGmp, Linear(0.0, 0.8, 0, 20), {5, 0, 0})}, m.params, &opt, 3);
  ASSERT_TRUE(c.ok());
  for (int64_t step = 0; step < 21; ++step) TrainStep(m, opt, **c, step);
  const auto w = m.Get("blocks.0.mlp.fc1.weight");
  const auto mask = (*c)->MaskOf("blocks.0.mlp.fc1.weight");
  EXPECT_EQ(Zeros(mask), std::llround(0.8 * 256));
  auto& state = static_cast<torch::optim::AdamWParamState&>(
      *opt.state().at(c10::guts::to_string(w.unsafeGetTensorImpl())));
  EXPECT_EQ((state.exp_avg() * (1 - mask)).abs().sum().item<double>(), 0.0);
  EXPECT_EQ((state.exp_avg_sq() * (1 - mask)).abs().sum().item<double>(), 0.0);
  EXPECT_GT((state.exp_avg_sq() * mask).abs().sum().item<double>(), 0.0);  // Active entries keep theirs.
}

TEST(DynamicSparsityControllerTest, RegrownWeightsStartAtZero) {
  Model m(5);
  torch::optim::AdamW opt(m.tensors, torch::optim::AdamWOptions(0.01));
  auto c = DynamicSparsityController::Create(
      {Group(DynamicAlgorithm::kSet, StepSchedule::Constant(0.5), {3, 0, 0})}, m.params, &opt, 9);
  ASSERT_TRUE(c.ok());
  for (int64_t step = 0; step < 2; ++step) TrainStep(m, opt, **c, step);
  const auto before = (*c)->MaskOf("blocks.0.mlp.fc1.weight").clone();
  // Step 3 is an update step; check the weights right after it, before any further training.
  TrainStep(m, opt, **c, 2);
  TrainStep(m, opt, **c, 3);
  const auto after = (*c)->MaskOf("blocks.0.mlp.fc1.weight");
  const auto grown = after * (1 - before);
  EXPECT_GT(grown.sum().item<float>(), 0.0f);
  EXPECT_EQ((m.Get("blocks.0.mlp.fc1.weight") * grown).abs().sum().item<double>(), 0.0);
}

TEST(DynamicSparsityControllerTest, ResumeFromStateDictKeepsMasksAndContinuesIdentically) {
  auto run = [](int64_t steps, DynamicSparsityController::NamedParameters* load, Model* model) {
    torch::optim::SGD opt(model->tensors, torch::optim::SGDOptions(0.05));
    DynamicSparsityGroup set = Group(DynamicAlgorithm::kSet, StepSchedule::Constant(0.6), {4, 0, 0});
    set.param_filter = {"blocks.*.mlp.fc*.weight"};
    auto c = DynamicSparsityController::Create(
        {set, Group(DynamicAlgorithm::kRigl, StepSchedule::Constant(0.7), {4, 0, 0})}, model->params, &opt,
        77);
    EXPECT_TRUE(c.ok()) << c.status();
    if (load != nullptr) {
      EXPECT_TRUE((*c)->LoadStateDict(*load).ok());
    }
    const int64_t first = load != nullptr ? 10 : 0;
    for (int64_t step = first; step < steps; ++step) TrainStep(*model, opt, **c, step);
    return (*c)->StateDict();
  };
  Model full(6);
  const auto full_masks = run(20, nullptr, &full);
  Model half(6);
  auto half_masks = run(10, nullptr, &half);
  ASSERT_EQ(half_masks.size(), 3u);
  // A new run (fresh controller over the same weights) restores the masks and repeats the random choices.
  auto resumed_masks = run(20, &half_masks, &half);
  ASSERT_EQ(resumed_masks.size(), full_masks.size());
  for (size_t i = 0; i < full_masks.size(); ++i) {
    EXPECT_EQ(resumed_masks[i].first, full_masks[i].first);
    EXPECT_TRUE(torch::equal(resumed_masks[i].second, full_masks[i].second)) << full_masks[i].first;
  }
  // Bad checkpoints name the parameter.
  Model other(7);
  auto c = DynamicSparsityController::Create({Group(DynamicAlgorithm::kSet, StepSchedule::Constant(0.6))},
                                             other.params);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->LoadStateDict({{"blocks.0.mlp.fc1.weight", torch::ones({2, 2})}}).message(),
            "checkpoint mask of blocks.0.mlp.fc1.weight has shape [2, 2], the parameter [32, 8]");
  EXPECT_EQ((*c)->LoadStateDict({{"head.weight", torch::ones({2, 2})}}).message(),
            "checkpoint has a dynamic sparsity mask for head.weight, which no group of this run's "
            "sparsity.dynamic selects");
}

TEST(DynamicSparsityControllerTest, FirstMatchingGroupWinsAndPlanListsEveryParameter) {
  Model m(8);
  DynamicSparsityGroup mlp = Group(DynamicAlgorithm::kRigl, StepSchedule::Constant(0.9));
  mlp.param_filter = {"blocks.*.mlp.*"};
  DynamicSparsityGroup rest = Group(DynamicAlgorithm::kGmp, Linear(0, 0.5, 0, 100));
  rest.param_filter = {"blocks.*"};
  rest.balance_out_groups = 4;
  auto c = DynamicSparsityController::Create({mlp, rest}, m.params);
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& plan = (*c)->Plan();
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].group, -1);  // pos_embed.
  EXPECT_EQ(plan[1].group, 1);   // blocks.0.norm1.weight: an explicit glob takes vectors.
  EXPECT_EQ(plan[2].group, 1);
  EXPECT_EQ(plan[3].group, 0);
  EXPECT_EQ(plan[3].algorithm, DynamicAlgorithm::kRigl);
  EXPECT_EQ(plan[4].group, 0);  // fc1.bias.
  EXPECT_EQ(plan[2].blocks.out_groups, 4);
  EXPECT_EQ(Zeros((*c)->MaskOf("blocks.0.mlp.fc1.weight")), std::llround(0.9 * 256));
  const std::string text = (*c)->FormatPlan();
  EXPECT_NE(text.find("pos_embed [1, 5, 8]: dense"), std::string::npos) << text;
  EXPECT_NE(
      text.find("blocks.0.mlp.fc1.weight [32, 8]: group 0 RIGL sparsity 0.9, drop_fraction 0.3, init RANDOM, "
                "update every 5 from step 0"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("blocks.0.attn.qkv.weight [24, 8]: group 1 GMP sparsity LINEAR 0->0.5 over steps [0, 100)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("balanced 4x1 (out x in)"), std::string::npos) << text;
}

TEST(DynamicSparsityControllerTest, BadFiltersAndBalanceGroupsFail) {
  Model m(9);
  DynamicSparsityGroup g = Group(DynamicAlgorithm::kRigl, StepSchedule::Constant(0.9));
  g.param_filter = {"blocks.*.ffn.*"};
  auto bad = DynamicSparsityController::Create({g}, m.params);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.status().message().find("sparsity.dynamic[0].param_filter[0]: value 'blocks.*.ffn.*' matches no "
                                  "parameter of the model"),
      std::string::npos)
      << bad.status();
  g.param_filter = {};
  g.balance_out_groups = 5;
  auto uneven = DynamicSparsityController::Create({g}, m.params);
  ASSERT_FALSE(uneven.ok());
  EXPECT_EQ(uneven.status().message(),
            "sparsity.dynamic[0].balance_out_groups: value 5 does not divide the 24 output rows of "
            "blocks.0.attn.qkv.weight [24, 8]");
}

// SRIGL keeps its authors' counters: 16 steps with T_end int(0.75 x 16) = 12 and freq 4 update after the
// 4th and 8th optimizer steps (0-based 3 and 7), not at the 12th; the dense gradient of the 2 steps up to
// an update is in the state dict between them, every row of fc1 has the same count (or none), and the AdamW
// moments of pruned weights are left alone, as the authors leave them.
TEST(DynamicSparsityControllerTest, SriglUpdatesOnTheAuthorsCountersWithAConstantFanIn) {
  Model m(3);
  torch::optim::AdamW opt(m.tensors, torch::optim::AdamWOptions(0.01));
  DynamicSparsityGroup g = Group(DynamicAlgorithm::kSrigl, StepSchedule::Constant(0.75), {4, 0, 0});
  g.grad_accumulation_n = 2;
  g.min_salient_weights_per_neuron = 0.5;
  g.param_filter = {"blocks.0.mlp.fc1.weight"};
  auto c = DynamicSparsityController::Create({g}, m.params, &opt, 5, /*total_steps=*/16);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE((*c)->FormatPlan().find("not M-grouped N:M"), std::string::npos) << (*c)->FormatPlan();
  std::vector<int64_t> changed;
  for (int64_t step = 0; step < 16; ++step) {
    const torch::Tensor before = (*c)->MaskOf("blocks.0.mlp.fc1.weight").clone();
    TrainStep(m, opt, **c, step);
    const torch::Tensor after = (*c)->MaskOf("blocks.0.mlp.fc1.weight");
    if (!torch::equal(before, after)) {
      changed.push_back(step);
      // The weights it pruned keep their AdamW moments.
      auto& state = static_cast<torch::optim::AdamWParamState&>(
          *opt.state().at(compat::OptimizerStateKey(m.Get("blocks.0.mlp.fc1.weight"))));
      const torch::Tensor pruned = before.gt(0) & after.eq(0);
      EXPECT_GT(state.exp_avg_sq().masked_select(pruned).abs().sum().item<double>(), 0.0) << step;
    }
    const bool in_window = step == 2 || step == 6 || step == 10;  // u = 3, 7, 11: one step before an update.
    bool has_grad = false;
    for (const auto& [name, t] : (*c)->StateDict())
      has_grad |= name == "srigl_dense_grad/blocks.0.mlp.fc1.weight";
    EXPECT_EQ(has_grad, in_window && step != 10) << step;  // u = 12 is T_end: no window before it.
    const torch::Tensor fan_in = after.sum(1);
    const torch::Tensor counts = fan_in.masked_select(fan_in.gt(0));
    EXPECT_EQ(counts.min().item<float>(), counts.max().item<float>()) << step << fan_in;
  }
  EXPECT_EQ(changed, (std::vector<int64_t>{3, 7}));
}

}  // namespace
}  // namespace nmsparse
