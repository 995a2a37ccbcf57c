// fp16's dynamic loss scaling in training (issue 24): a step with an inf gradient is skipped whole (weights,
// AdamW state, masks and SR-STE untouched) and halves the scale; clean steps grow it; a resume in the middle
// of a scaled run is bit-exact; SR-STE's term under the scale, exact and as the reference has it. On the CPU
// with Debian's LibTorch, fp16 autocast is refused, so the trainer tests scale an fp32 run
// (TrainerTestHooks::loss_scaling): the scaler, the skip and the checkpoint are the same code.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>

#include "worker/sparsity/sparse_functions.h"
#include "worker/sparsity/sparsity_method.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/optim/adamw_step.h"
#include "worker/trainer/optim/optimizer.h"
#include "worker/trainer/optim/optimizer_step.h"
#include "worker/trainer/precision/autocast_guard.h"
#include "worker/trainer/precision/loss_scaler.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

constexpr char kSrsteSpec[] = R"(
seed: 3
model: {name: vit_nano_patch7_28, drop_path_rate: 0.1}
data: {dataset: fashion_mnist, train_subset: 256, eval_subset: 64, batch_size: 32, hflip: 0.5}
optimizer: {lr: 0.002, clip_grad_norm: 1.0, mixup_alpha: 0.2}
schedule: {epochs: 2, warmup_epochs: 0.5, log_every_steps: 4}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: "FF,Q,K,V", srste_lambda: 0.01}
)";

std::vector<torch::Tensor> Copies(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

// One optimizer step's forward and backward on a fixed batch, the loss scaled.
void ScaledBackward(ClassifierImpl& model, SparsityMethod& sparsity, LossScaler& scaler, int64_t step) {
  sparsity.BeginStep(0, step);
  torch::manual_seed(step);
  const torch::Tensor images = torch::randn({4, 1, 28, 28});
  const torch::Tensor labels = torch::tensor({0, 3, 5, 9}, torch::kLong);
  model.zero_grad();
  scaler.Scale(torch::nn::functional::cross_entropy(model.forward(images), labels)).backward();
}

TEST(LossScalingTest, AnInfGradientSkipsTheStepAndHalvesTheScale) {
  const ExperimentConfig config = ParseValidExperiment(kSrsteSpec);
  auto model = CreateModel(*LookupModel("vit_nano_patch7_28"));
  auto optimizer = MakeAdamW(*model, config.optimizer);
  AdamWStep adamw(*optimizer, /*fused=*/false);
  LossScaler scaler(LossScalerOptions{}, torch::kCPU);
  auto sparsity = CreateSparsityMethod(
      config.sparsity, *model,
      SparsityMethodOptions(2, 8).optimizer(optimizer.get()).srste_term_scale(scaler.scale()));
  ASSERT_TRUE(sparsity.ok()) << sparsity.status();
  const std::vector<torch::Tensor> params = model->parameters();
  OptimizerStep step(params, adamw, **sparsity, config.optimizer.clip_grad_norm, &scaler);
  ASSERT_TRUE(step.host_skip());

  ScaledBackward(*model, **sparsity, scaler, 0);
  step(0);  // A clean step: AdamW now has moments to leave alone.
  ASSERT_EQ(scaler.skipped_steps().item<float>(), 0.0f);
  const std::vector<torch::Tensor> weights = Copies(params);
  const SparsityReport masks_before = (*sparsity)->Report(1, /*per_layer=*/true);
  const auto& state = static_cast<torch::optim::AdamWParamState&>(
      *optimizer->state().begin()->second);  // Any parameter's: all step together.
  const int64_t adam_steps = state.step();
  const torch::Tensor exp_avg = state.exp_avg().clone();

  ScaledBackward(*model, **sparsity, scaler, 1);
  params[3].grad().view(-1)[0].fill_(std::numeric_limits<float>::infinity());  // As an fp16 overflow.
  step(1);
  EXPECT_EQ(scaler.skipped_steps().item<float>(), 1.0f);
  EXPECT_EQ(scaler.scale().item<float>(), 32768.0f);  // 2^16 * 0.5
  EXPECT_EQ(scaler.growth_tracker().item<int>(), 0);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], weights[i])) << i;
  EXPECT_EQ(state.step(), adam_steps);
  EXPECT_TRUE(torch::equal(state.exp_avg(), exp_avg));
  // The masks (and so SR-STE's term, lambda * (1 - mask) * W) are those of the unchanged weights.
  const SparsityReport masks_after = (*sparsity)->Report(1, /*per_layer=*/true);
  EXPECT_EQ(masks_after.numbers, masks_before.numbers);
  EXPECT_EQ(masks_after.labels, masks_before.labels);

  ScaledBackward(*model, **sparsity, scaler, 2);
  step(2);  // Clean again: the step is taken.
  EXPECT_EQ(state.step(), adam_steps + 1);
  EXPECT_FALSE(torch::equal(params[3], weights[3]));
}

// SR-STE's term g + lambda * (1 - mask) * W under a loss scale S: exact mode multiplies the term by S so that
// unscaling leaves it as without scaling, bit for bit (S a power of two: scaling commutes with rounding);
// the reference's mode leaves it unscaled, so unscaling divides it by S, exactly.
TEST(LossScalingTest, ReferenceModeDividesTheSrsteTermByTheScale) {
  torch::manual_seed(4);
  const torch::Tensor w0 = torch::randn({8, 16});
  LayerRule rule;
  rule.recipe = Recipe::kSrste;
  rule.srste_lambda = 0.5;
  rule.blocks = {BlockRule{true, NM{2, 4}}};
  LossScaler scaler(LossScalerOptions{}, torch::kCPU);
  const auto term_after_unscaling = [&](bool exact) {
    LayerRule r = rule;
    if (exact) r.srste_term_scale = std::make_shared<const torch::Tensor>(scaler.scale());
    torch::Tensor w = w0.clone().requires_grad_(true);
    // No loss gradient reaches W~ (times zero): what W gets is the term alone, times the scale's handling.
    scaler.Scale((ApplyLayerRule(w, &r) * 0).sum()).backward();
    scaler.Unscale({w});
    return w.grad().clone();
  };
  torch::Tensor unscaled_w = w0.clone().requires_grad_(true);
  (ApplyLayerRule(unscaled_w, &rule) * 0).sum().backward();
  const torch::Tensor plain = unscaled_w.grad();
  ASSERT_GT(plain.abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(torch::equal(term_after_unscaling(true), plain));
  EXPECT_TRUE(torch::equal(term_after_unscaling(false), plain / 65536.0));
}

TEST(LossScalingTest, CleanStepsGrowTheScaleAndTheLinesCountSkippedSteps) {
  const ExperimentConfig config = ParseValidExperiment(kSrsteSpec);
  CapturedRun run("growth");
  run.options.test.loss_scaling = true;
  run.options.test.loss_scale_growth_interval = 3;
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  // 16 clean steps (fp32 does not overflow at these scales): 5 growths.
  auto final_line = LastMetricFields(run.metrics.str(), "final");
  EXPECT_EQ(final_line["loss_scale"], std::to_string(65536 * 32)) << run.metrics.str();
  EXPECT_EQ(final_line["skipped_steps"], "0");
  EXPECT_EQ(LastMetricFields(run.metrics.str(), "step")["loss_scale"], std::to_string(65536 * 32));
  EXPECT_NE(run.log.str().find("fp32 with loss scaling"), std::string::npos) << run.log.str();
}

// Stopped mid-run with the growth tracker part-way (step 11, interval 3), resumed: the same weights, AdamW
// state and scaler state as a straight run.
TEST(LossScalingTest, ResumeInTheMiddleOfAScaledRunIsBitExact) {
  const ExperimentConfig config = ParseValidExperiment(kSrsteSpec);
  std::ostringstream sink;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("scaled_straight");
  straight.metrics = straight.log = &sink;
  straight.test.loss_scaling = true;
  straight.test.loss_scale_growth_interval = 3;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();
  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("scaled_interrupted");
  interrupted.stop_after_steps = 11;
  interrupted.resume = true;
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();

  const auto load = [&](const std::string& dir, TrainState* state) {
    auto model = CreateModel(*LookupModel("vit_nano_patch7_28"));
    auto optimizer = MakeAdamW(*model, config.optimizer);
    EXPECT_TRUE(LoadCheckpoint(dir, *model, *optimizer, state));
    return model;
  };
  TrainState a, b;
  auto ma = load(straight.out_dir, &a);
  auto mb = load(interrupted.out_dir, &b);
  ASSERT_TRUE(a.loss_scaler.defined() && b.loss_scaler.defined());
  EXPECT_TRUE(torch::equal(a.loss_scaler, b.loss_scaler)) << a.loss_scaler << b.loss_scaler;
  auto pa = ma->named_parameters();
  auto pb = mb->named_parameters();
  for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
}

TEST(LossScalingTest, Fp16WithoutFp16AutocastIsRefusedNamingTheKey) {
  if (HasFp16Autocast(c10::DeviceType::CPU)) GTEST_SKIP() << "this LibTorch autocasts fp16 on the CPU";
  ExperimentConfig config = ParseValidExperiment(kSrsteSpec);
  config.resources.precision = "fp16";
  CapturedRun run("fp16_cpu");
  try {
    RunTraining(config, run.options);
    ADD_FAILURE() << "fp16 on the CPU ran";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("resources.precision fp16"), std::string::npos) << e.what();
  }
}

// Where this LibTorch autocasts fp16 on the CPU (2.4+, the CMake build): a real fp16 run, its lines showing
// the scaler.
TEST(LossScalingTest, Fp16RunTrainsWhereFp16AutocastExists) {
  if (!HasFp16Autocast(c10::DeviceType::CPU)) GTEST_SKIP() << "no fp16 CPU autocast in this LibTorch";
  ExperimentConfig config = ParseValidExperiment(kSrsteSpec);
  config.resources.precision = "fp16";
  CapturedRun run("fp16_run");
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  auto final_line = LastMetricFields(run.metrics.str(), "final");
  EXPECT_EQ(final_line["precision"], "fp16");
  EXPECT_NE(final_line["loss_scale"], "");
  EXPECT_NE(final_line["skipped_steps"], "");
  EXPECT_NE(run.log.str().find("fp16 autocast with dynamic loss scaling"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse
