// bf16 autocast (resources.precision: bf16) on CPU: the guard's scope and restore, the sparse layers'
// autograd functions under autocast, and short bf16 training runs (fp32 weights, optimizer state and
// checkpoints; learning; resume).
#include <ATen/autocast_mode.h>
#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "worker/compat/torch_compat.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/optim/optimizer.h"
#include "worker/trainer/precision/autocast_guard.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

// Every test starts and must end with autocast off and LibTorch's default CPU dtype.
class AutocastTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(compat::IsAutocastEnabled(at::kCPU));
    ASSERT_EQ(compat::AutocastDtype(at::kCPU), at::kBFloat16);
  }
  void TearDown() override {
    EXPECT_FALSE(compat::IsAutocastEnabled(at::kCPU));
    EXPECT_FALSE(compat::IsAutocastEnabled(at::kCUDA));
    compat::SetAutocastEnabled(at::kCPU, false);
    compat::SetAutocastDtype(at::kCPU, at::kBFloat16);
  }
};

TEST_F(AutocastTest, LinearIsBf16InsideTheGuardAndFp32AfterIt) {
  const auto x = torch::randn({4, 8});
  const auto w = torch::randn({16, 8});
  {
    AutocastGuard guard(true, c10::DeviceType::CPU);
    EXPECT_TRUE(compat::IsAutocastEnabled(at::kCPU));
    EXPECT_FALSE(compat::IsAutocastEnabled(at::kCUDA));  // CUDA autocast untouched by a CPU guard.
    EXPECT_EQ(torch::linear(x, w).scalar_type(), at::kBFloat16);
    EXPECT_EQ((x + 1).scalar_type(), at::kFloat);  // Not an autocast op: as it was.
  }
  EXPECT_FALSE(compat::IsAutocastEnabled(at::kCPU));
  EXPECT_EQ(torch::linear(x, w).scalar_type(), at::kFloat);
  {
    AutocastGuard off(false, c10::DeviceType::CPU);  // fp32 runs: nothing changes.
    EXPECT_FALSE(compat::IsAutocastEnabled(at::kCPU));
    EXPECT_EQ(torch::linear(x, w).scalar_type(), at::kFloat);
  }
}

// The guard restores what was there before it: inside another guard, autocast already on, and the CUDA
// state (its flag and dtype, float16 by default; setting them runs no kernel, so a CPU build checks them).
TEST_F(AutocastTest, GuardRestoresThePreviousState) {
  {
    AutocastGuard outer(true, c10::DeviceType::CPU);
    {
      AutocastGuard inner(true, c10::DeviceType::CPU);
      EXPECT_TRUE(compat::IsAutocastEnabled(at::kCPU));
    }
    EXPECT_TRUE(compat::IsAutocastEnabled(at::kCPU));  // The outer scope is still autocast.
  }
  EXPECT_FALSE(compat::IsAutocastEnabled(at::kCPU));
  compat::SetAutocastEnabled(at::kCPU, true);  // Turned on by someone else: left on.
  { AutocastGuard guard(true, c10::DeviceType::CPU); }
  EXPECT_TRUE(compat::IsAutocastEnabled(at::kCPU));
  compat::SetAutocastEnabled(at::kCPU, false);

  ASSERT_EQ(compat::AutocastDtype(at::kCUDA), at::kHalf);
  {
    AutocastGuard cuda(true, c10::DeviceType::CUDA);
    EXPECT_TRUE(compat::IsAutocastEnabled(at::kCUDA));
    EXPECT_FALSE(compat::IsAutocastEnabled(at::kCPU));
    EXPECT_EQ(compat::AutocastDtype(at::kCUDA), at::kBFloat16);
  }
  EXPECT_FALSE(compat::IsAutocastEnabled(at::kCUDA));
  EXPECT_EQ(compat::AutocastDtype(at::kCUDA), at::kHalf);
  EXPECT_THROW(AutocastGuard(true, c10::DeviceType::Meta), c10::Error);
}

// Inside one scope autocast reuses its bf16 copy of an fp32 leaf weight; leaving the scope drops it, so a
// forward pass after the optimizer step sees the new weights.
TEST_F(AutocastTest, LeavingTheGuardClearsTheWeightCache) {
  torch::manual_seed(3);
  const auto x = torch::randn({4, 8});
  auto w = torch::randn({16, 8}, torch::requires_grad());
  torch::Tensor before, stale;
  {
    AutocastGuard guard(true, c10::DeviceType::CPU);
    before = torch::linear(x, w);
    torch::NoGradGuard no_grad;
    w.add_(1.0);
    stale = torch::linear(x, w);
  }
  EXPECT_TRUE(torch::equal(stale, before));  // The cached copy: why the cache must not outlive a step.
  AutocastGuard guard(true, c10::DeviceType::CPU);
  EXPECT_FALSE(torch::equal(torch::linear(x, w), before));
}

LayerRule Rule(Recipe recipe, NM nm, float decay, double lambda) {
  LayerRule rule;
  rule.recipe = recipe;
  rule.decay = decay;
  rule.srste_lambda = lambda;
  rule.blocks = {BlockRule{true, nm}};
  return rule;
}

// W~ is formed in fp32 from the fp32 weight and its fp32 mask; the linear casts it to bf16. Gradients come
// back through the cast as fp32, with the recipe's semantics (SR-STE's term at the fp32 mask's pruned
// positions), close to an fp32 pass but not equal to it (bf16 really ran).
TEST_F(AutocastTest, SparseLayersUnderAutocastGiveFp32Gradients) {
  torch::manual_seed(4);
  const auto x = torch::randn({6, 5, 32});
  for (const LayerRule& rule : {Rule(Recipe::kSrste, {2, 4}, 0.f, 0.5), Rule(Recipe::kDecay, {1, 4}, 0.3f, 0),
                                Rule(Recipe::kDecay, {2, 8}, 0.f, 0)}) {
    SparseLinear bf16(32, 16), fp32(32, 16);
    {
      torch::NoGradGuard no_grad;
      fp32->weight.copy_(bf16->weight);
      fp32->bias.copy_(bf16->bias);
    }
    bf16->set_rule(std::make_shared<LayerRule>(rule));
    fp32->set_rule(std::make_shared<LayerRule>(rule));
    torch::Tensor out;
    {
      AutocastGuard guard(true, c10::DeviceType::CPU);
      out = bf16(x);
    }
    ASSERT_EQ(out.scalar_type(), at::kBFloat16);
    (out.to(torch::kFloat) * out.to(torch::kFloat)).sum().backward();
    const auto ref = fp32(x);
    (ref * ref).sum().backward();
    ASSERT_TRUE(bf16->weight.grad().defined());
    EXPECT_EQ(bf16->weight.grad().scalar_type(), at::kFloat);
    EXPECT_EQ(bf16->bias.grad().scalar_type(), at::kFloat);
    EXPECT_EQ(bf16->weight.scalar_type(), at::kFloat);
    const auto& g = bf16->weight.grad();
    const auto& g_ref = fp32->weight.grad();
    const double scale = g_ref.abs().max().item<double>();
    EXPECT_LT((g - g_ref).abs().max().item<double>(), 0.03 * scale) << static_cast<int>(rule.recipe);
    EXPECT_FALSE(torch::equal(g, g_ref));
    if (rule.recipe == Recipe::kSrste) {
      // lambda * W at the pruned positions dominates there: bf16 gradients agree with fp32 ones in sign.
      const auto pruned = NMMask(bf16->weight.detach(), {2, 4}, SparseDim::kRow, false).eq(0);
      EXPECT_TRUE(torch::equal(g.masked_select(pruned).sign(), g_ref.masked_select(pruned).sign()));
    }
  }
  // A sparse patch embedding (conv) likewise.
  SparseConv2d conv(SparseConv2dOptions(1, 8, 7).stride(7));
  auto conv_rule = std::make_shared<LayerRule>(Rule(Recipe::kDecay, {1, 4}, 0.f, 0));
  conv_rule->is_conv = true;
  conv->set_rule(conv_rule);
  torch::Tensor y;
  {
    AutocastGuard guard(true, c10::DeviceType::CPU);
    y = conv(torch::randn({2, 1, 28, 28}));
  }
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  y.to(torch::kFloat).pow(2).sum().backward();
  EXPECT_EQ(conv->weight.grad().scalar_type(), at::kFloat);
  EXPECT_GT(conv->weight.grad().abs().sum().item<double>(), 0.0);
}

// ForwardLogits: fp32 logits in both precisions; the bf16 forward pass differs from the fp32 one, a little.
TEST_F(AutocastTest, ForwardLogitsAreFp32) {
  torch::manual_seed(5);
  auto model = CreateModel(*LookupModel("vit_nano_patch7_28"));
  model->eval();
  const auto images = torch::randn({3, 1, 28, 28});
  torch::NoGradGuard no_grad;
  const auto fp32 = ForwardLogits(*model, images, false);
  const auto bf16 = ForwardLogits(*model, images, true);
  EXPECT_EQ(fp32.scalar_type(), at::kFloat);
  EXPECT_EQ(bf16.scalar_type(), at::kFloat);
  EXPECT_TRUE(torch::equal(fp32, model->forward(images)));
  EXPECT_FALSE(torch::equal(bf16, fp32));
  EXPECT_LT((bf16 - fp32).abs().max().item<double>(), 0.1 * fp32.abs().max().item<double>() + 0.05);
}

// One epoch of 2,000 Fashion-MNIST images, nano ViT with MDGF-Exp 2:4 on FF, in bf16: it learns, says its
// precision, and its checkpoint holds fp32 weights and AdamW moments and records bf16.
TEST_F(AutocastTest, Bf16RunLearnsAndKeepsFp32WeightsAndOptimizerState) {
  const auto config = ParseValidExperiment(R"(
seed: 1
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 2000, eval_subset: 1000, batch_size: 32}
optimizer: {lr: 0.003, weight_decay: 0.05}
schedule: {epochs: 1, warmup_epochs: 0.2, log_every_steps: 20}
resources: {precision: bf16}
sparsity: {sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.05, n_sparsity: 2, m_sparsity: 4,
           sparsity_loc: FF}
)");
  CapturedRun run("bf16");
  const TrainerOptions& options = run.options;
  std::ostringstream& metrics = run.metrics;
  std::ostringstream& log = run.log;
  ASSERT_EQ(RunTraining(config, options), kExitOk) << log.str();
  EXPECT_NE(log.str().find("bf16 autocast"), std::string::npos) << log.str();
  const auto steps = MetricLines(metrics.str(), "step");
  ASSERT_EQ(steps.size(), 3u) << metrics.str();
  const double first_loss = std::stod(MetricFields(steps.front())["loss"]);
  const double last_loss = std::stod(MetricFields(steps.back())["loss"]);
  // Measured here: step losses 2.183 -> 1.833, top-1 0.391 (chance 0.1); fp32: 2.183 -> 1.841, top-1 0.395.
  EXPECT_LT(last_loss, first_loss - 0.2) << metrics.str();
  const auto epoch = MetricLines(metrics.str(), "epoch");
  ASSERT_EQ(epoch.size(), 1u);
  EXPECT_EQ(MetricFields(epoch[0])["precision"], "bf16");
  EXPECT_EQ(MetricFields(epoch[0])["nm_stage"], "2:4");
  const auto final_line = MetricLines(metrics.str(), "final");
  ASSERT_EQ(final_line.size(), 1u);
  EXPECT_EQ(MetricFields(final_line[0])["precision"], "bf16");
  EXPECT_GT(std::stod(MetricFields(final_line[0])["top1"]), 0.25) << metrics.str();

  std::ifstream spec(options.out_dir + "/spec.yaml");
  std::stringstream spec_text;
  spec_text << spec.rdbuf();
  EXPECT_NE(spec_text.str().find("  precision: bf16\n"), std::string::npos) << spec_text.str();

  // The same run in fp32: bf16 really ran (other losses), and learned about as much.
  ExperimentConfig fp32 = config;
  fp32.resources.precision = "fp32";
  std::ostringstream fp32_metrics;
  TrainerOptions fp32_options = options;
  fp32_options.out_dir = TestTempDir("bf16_as_fp32");
  fp32_options.metrics = &fp32_metrics;
  ASSERT_EQ(RunTraining(fp32, fp32_options), kExitOk) << log.str();
  const auto fp32_final = MetricLines(fp32_metrics.str(), "final");
  ASSERT_EQ(fp32_final.size(), 1u);
  EXPECT_EQ(MetricFields(fp32_final[0])["precision"], "fp32");
  EXPECT_NE(MetricFields(fp32_final[0])["loss"], MetricFields(final_line[0])["loss"]);
  EXPECT_NEAR(std::stod(MetricFields(fp32_final[0])["top1"]), std::stod(MetricFields(final_line[0])["top1"]),
              0.05);

  auto model = CreateModel(*LookupModel("vit_nano_patch7_28"));
  auto optimizer = MakeAdamW(*model, config.optimizer);
  TrainState state;
  ASSERT_TRUE(LoadCheckpoint(options.out_dir, *model, *optimizer, &state));
  EXPECT_EQ(state.precision, "bf16");
  EXPECT_EQ(state.global_step, 62);
  for (const auto& p : model->named_parameters()) EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
  int moments = 0;
  for (const auto& [key, s] : optimizer->state()) {
    const auto& adamw = static_cast<const torch::optim::AdamWParamState&>(*s);
    EXPECT_EQ(adamw.exp_avg().scalar_type(), at::kFloat);
    EXPECT_EQ(adamw.exp_avg_sq().scalar_type(), at::kFloat);
    EXPECT_GT(adamw.exp_avg_sq().abs().sum().item<double>(), 0.0);
    ++moments;
  }
  EXPECT_EQ(moments, static_cast<int>(model->parameters().size()));
}

// A bf16 run stopped mid-epoch and resumed ends with the same weights as an uninterrupted bf16 run (the
// autocast cache is dropped after every forward pass, so nothing stale survives a step); resuming it as fp32
// is refused, naming both precisions.
TEST_F(AutocastTest, Bf16ResumeIsIdenticalAndAnotherPrecisionIsRefused) {
  const auto config = ParseValidExperiment(R"(
seed: 5
model: {name: vit_nano_patch7_28, drop_path_rate: 0.1}
data: {dataset: fashion_mnist, train_subset: 256, eval_subset: 64, batch_size: 32, hflip: 0.5}
optimizer: {lr: 0.002, clip_grad_norm: 1.0, label_smoothing: 0.1}
schedule: {epochs: 2, warmup_epochs: 0.5}
resources: {precision: bf16}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: "FF,Q,K,V"}
)");
  std::ostringstream sink;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("bf16_straight");
  straight.metrics = straight.log = &sink;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();
  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("bf16_interrupted");
  interrupted.stop_after_steps = 11;
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  interrupted.resume = true;

  ExperimentConfig fp32 = config;
  fp32.resources.precision = "fp32";
  try {
    RunTraining(fp32, interrupted);
    FAIL() << "expected a usage error";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("resources.precision fp32 differs from the checkpoint's bf16"),
              std::string::npos)
        << e.what();
  }
  std::ifstream spec(interrupted.out_dir + "/spec.yaml");  // The refused attempt left it alone.
  std::stringstream spec_text;
  spec_text << spec.rdbuf();
  EXPECT_NE(spec_text.str().find("  precision: bf16\n"), std::string::npos) << spec_text.str();
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();

  auto a = ExpectSameCheckpointWeights("vit_nano_patch7_28", straight.out_dir, interrupted.out_dir);
  EXPECT_GT(DistanceFromFreshWeights("vit_nano_patch7_28", *a), 1.0);
}

}  // namespace
}  // namespace nmsparse
