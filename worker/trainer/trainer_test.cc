// In-process tests of the training loop and its parts (tiny models on Fashion-MNIST subsets).
#include "worker/trainer/trainer.h"

#include <sys/stat.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "schemas/model_flops.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/data/synthetic_dataset.h"
#include "worker/trainer/device/host_reads.h"
#include "worker/trainer/distributed/decode_failures_across_ranks.h"
#include "worker/trainer/evaluator.h"
#include "worker/trainer/loss/loss.h"
#include "worker/trainer/loss/mixup.h"
#include "worker/trainer/metrics/metrics_writer.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/optim/optimizer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

TEST(TrainerTest, OneEpochOnTwoThousandImagesLearns) {
  const auto config = ParseValidExperiment(R"(
seed: 1
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 2000, eval_subset: 1000, batch_size: 32}
optimizer: {lr: 0.003, weight_decay: 0.05}
schedule: {epochs: 1, warmup_epochs: 0.2}
)");
  CapturedRun run("learn");
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  const std::string metrics = run.metrics.str();
  auto final_line = LastMetricFields(metrics, "final");
  // Chance is 0.1; this run measured 0.40 top-1 and 0.88 top-5 here.
  EXPECT_GT(std::stod(final_line["top1"]), 0.25) << metrics;
  EXPECT_GT(std::stod(final_line["top5"]), 0.7) << metrics;
  EXPECT_EQ(final_line["params"], "27978");  // As DescribeRun counts them (DescribeRunListsSparseLayers).
  auto epoch_line = LastMetricFields(metrics, "epoch");
  EXPECT_EQ(epoch_line["step"], "62");
  EXPECT_EQ(epoch_line["phase"], "dense");
  EXPECT_GT(std::stod(epoch_line["images_per_s"]), 0.0);
  EXPECT_NEAR(std::stod(epoch_line["flops"]),
              62 * 32 * TrainingFlopsPerImage(*LookupModel("vit_nano_patch7_28")), 1e3);
  // Progress by default (log_every_steps 0, issue 27): a progress line at the first step, before the epoch's.
  const auto progress = MetricLines(metrics, "progress");
  ASSERT_FALSE(progress.empty()) << metrics;
  EXPECT_EQ(progress[0], R"({"kind":"progress","epoch":0,"step":1})");
  EXPECT_LT(metrics.find(progress[0]), metrics.find(R"({"kind":"epoch")"));
}

// Issue 40: without schedule.log_every_steps a run's loss curve has tens of points (schedule.log_points,
// 25 by default), spread evenly over its steps; log_points 0 keeps the per-epoch lines only.
TEST(TrainerTest, DefaultLogIntervalGivesTensOfPoints) {
  const std::string spec = R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, synthetic_size: 512, eval_subset: 64, batch_size: 8}
schedule: {epochs: 2)";
  CapturedRun run("default-log");
  ASSERT_EQ(RunTraining(ParseValidExperiment(spec + "}\n"), run.options), kExitOk) << run.log.str();
  const std::vector<std::string> steps = MetricLines(run.metrics.str(), "step");
  ASSERT_GE(steps.size(), 20u) << run.metrics.str();
  const int64_t total = 2 * 512 / 8;
  const int64_t every = total / 25;  // 128 steps: every 5th, 25 points.
  EXPECT_EQ(steps.size(), static_cast<size_t>(total / every));
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_NE(steps[i].find("\"step\":" + std::to_string((i + 1) * every) + ","), std::string::npos)
        << steps[i];
  }

  CapturedRun off("no-step-lines");
  ASSERT_EQ(RunTraining(ParseValidExperiment(spec + ", log_points: 0}\n"), off.options), kExitOk)
      << off.log.str();
  EXPECT_TRUE(MetricLines(off.metrics.str(), "step").empty()) << off.metrics.str();
  EXPECT_EQ(MetricLines(off.metrics.str(), "epoch").size(), 2u);
}

// Nothing in a training step reads a device value on the host (on a GPU each read drains the device's queue):
// reads happen at sync points only, every log_every_steps steps and around the epoch's end (evaluation,
// checkpoint). Counted through the one accessor every read goes through (host_reads.h).
TEST(TrainerTest, ReadsDeviceValuesOnlyAtSyncPoints) {
  const auto config = ParseValidExperiment(R"(
seed: 2
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 256, eval_subset: 64, batch_size: 16, hflip: 0.5}
optimizer: {lr: 0.002, clip_grad_norm: 1.0, label_smoothing: 0.1, mixup_alpha: 0.2}
schedule: {epochs: 2, log_every_steps: 5}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FF}
)");
  CapturedRun run("syncs");
  run.options.loader_threads = 2;          // The prefetcher too, as on a GPU.
  std::map<int64_t, int64_t> reads_after;  // global step -> reads so far
  run.options.test.on_step_end = [&](int64_t step) { reads_after[step] = HostReadCount(); };
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  const int64_t per_epoch = 16;
  ASSERT_EQ(reads_after.size(), 2u * per_epoch);
  for (int64_t step = 2; step <= 2 * per_epoch; ++step) {
    const int64_t reads = reads_after[step] - reads_after[step - 1];
    const bool log_point = step % 5 == 0;
    const bool epoch_end = step % per_epoch == 0 || (step - 1) % per_epoch == 0;  // Its sync; then eval.
    if (log_point) {
      EXPECT_GT(reads, 0) << "step " << step << ": a log point reads the loss";
    } else if (!epoch_end) {
      EXPECT_EQ(reads, 0) << "step " << step << " read a device value on the host";
    }
  }
  EXPECT_EQ(MetricLines(run.metrics.str(), "step").size(), 6u);  // Steps 5, 10, 15, 20, 25, 30.

  // The diagnostics (docs/sparsity-method.md §11) in step and epoch lines; the first log point has no
  // previous mask to compare with. FLOPs as SR-STE computes them: FF forward and input gradient at 2:4.
  const std::vector<std::string> steps = MetricLines(run.metrics.str(), "step");
  EXPECT_EQ(steps[0].find("\"flip_rate\""), std::string::npos) << steps[0];
  EXPECT_NE(steps[0].find("\"grad_norm_pruned/ff\""), std::string::npos) << steps[0];
  auto epoch = LastMetricFields(run.metrics.str(), "epoch");
  const double flip_rate = std::stod(epoch["flip_rate/ff"]);
  EXPECT_GE(flip_rate, 0.0);
  EXPECT_LT(flip_rate, 0.5);
  EXPECT_EQ(epoch["flip_rate"], epoch["flip_rate/ff"]);
  EXPECT_GT(std::stod(epoch["grad_norm_pruned"]), 0.0);
  EXPECT_GT(std::stod(epoch["grad_norm_kept"]), 0.0);
  const ModelArch arch = *LookupModel("vit_nano_patch7_28");
  EXPECT_NEAR(std::stod(epoch["flops"]),
              2 * per_epoch * 16 * TrainingFlopsPerImageAt(arch, {SparsityLocation::kFF}, {0.5, 0.5}), 1e3);
  EXPECT_NEAR(std::stod(LastMetricFields(run.metrics.str(), "final")["inference_flops"]),
              ForwardFlopsAt(arch, {SparsityLocation::kFF}, {0.5, 0.5}), 1.0);
}

// A run stopped mid-epoch (as by SIGTERM) and resumed ends with the same weights as an uninterrupted one:
// dropout and drop-path exercise the RNG state, MDGF-Exp the engine's step counter, AdamW its moments, the
// model EMA its checkpointed average.
TEST(TrainerTest, ResumeGivesIdenticalWeights) {
  const auto config = ParseValidExperiment(R"(
seed: 5
model: {name: vit_nano_patch7_28, drop_rate: 0.1, drop_path_rate: 0.1, ema: true, ema_decay: 0.9}
data: {dataset: fashion_mnist, train_subset: 256, eval_subset: 64, batch_size: 32, random_crop_padding: 2,
       hflip: 0.5}
optimizer: {lr: 0.002, clip_grad_norm: 1.0, label_smoothing: 0.1, mixup_alpha: 0.2}
schedule: {epochs: 2, warmup_epochs: 0.5}
sparsity: {sparsity_type: STRUCTURED_NM, decay_type: EXP, decay_coef: 0.05, n_sparsity: 1, m_sparsity: 4,
           sparsity_loc: "FF,Q,K,V"}
)");
  std::ostringstream sink;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("straight");
  straight.metrics = straight.log = &sink;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();

  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("interrupted");
  interrupted.stop_after_steps = 11;  // Mid-way through the second epoch (8 steps per epoch).
  interrupted.resume = true;          // No checkpoint yet: starts fresh.
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  std::ostringstream resumed_metrics;
  interrupted.metrics = &resumed_metrics;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();
  EXPECT_EQ(LastMetricFields(resumed_metrics.str(), "final")["step"], "16");

  auto a = ExpectSameCheckpointWeights("vit_nano_patch7_28", straight.out_dir, interrupted.out_dir);
  auto pa = a->named_parameters();
  const NamedTensors ema_a = LoadModelEmaFromCheckpoint(CheckpointPath(straight.out_dir));
  const NamedTensors ema_b = LoadModelEmaFromCheckpoint(CheckpointPath(interrupted.out_dir));
  ASSERT_EQ(ema_a.size(), pa.size());
  ASSERT_EQ(ema_b.size(), pa.size());
  for (size_t i = 0; i < ema_a.size(); ++i) {
    EXPECT_EQ(ema_a[i].first, ema_b[i].first);
    EXPECT_TRUE(torch::equal(ema_a[i].second, ema_b[i].second)) << ema_a[i].first;
  }
  EXPECT_FALSE(torch::equal(ema_a[0].second, pa[ema_a[0].first]));  // An average, not the weights.
  auto final_straight = LastMetricFields(sink.str(), "final");
  auto final_resumed = LastMetricFields(resumed_metrics.str(), "final");
  EXPECT_FALSE(final_resumed["ema_top1"].empty());
  EXPECT_EQ(final_resumed["ema_top1"], final_straight["ema_top1"]);
  EXPECT_EQ(final_resumed["ema_eval_loss"], final_straight["ema_eval_loss"]);
}

// optimizer.name: lion trains with timm's Lion, and its momentum is in the checkpoint: a run stopped
// mid-way and resumed ends with the weights of an uninterrupted one.
TEST(TrainerTest, LionResumesWithIdenticalWeights) {
  const auto config = ParseValidExperiment(R"(
seed: 7
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 128, eval_subset: 32, batch_size: 32}
optimizer: {name: lion, lr: 0.0003, beta2: 0.99, weight_decay: 0.05}
schedule: {epochs: 2}
sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: "FF"}
)");
  std::ostringstream sink;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("lion_straight");
  straight.metrics = straight.log = &sink;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();
  EXPECT_NE(sink.str().find(", Lion"), std::string::npos) << sink.str();

  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("lion_interrupted");
  interrupted.stop_after_steps = 6;  // Mid-way through the second epoch (4 steps per epoch).
  interrupted.resume = true;
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();

  ExpectSameCheckpointWeights("vit_nano_patch7_28", straight.out_dir, interrupted.out_dir);
}

// The plateau scheduler's state (best top-1, bad epochs, cooldown counter, current rate) is in the
// checkpoint: a run resumed after its second epoch trains its last two epochs at the rates of an
// uninterrupted run. With patience 0 and a rate too small to change an argmax, every epoch after the first is
// a plateau and halves the rate (1e-6, 1e-6, 5e-7, 2.5e-7; each decay is above torch's eps of 1e-8); a resume
// that forgot the state would start again at 1e-6.
TEST(TrainerTest, PlateauResumesWithTheRatesOfAStraightRun) {
  const auto config = ParseValidExperiment(R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 64, eval_subset: 64, batch_size: 32}
optimizer: {lr: 0.000001, weight_decay: 0.0}
schedule: {epochs: 4, warmup_epochs: 0, sched: plateau, patience_epochs: 0, decay_rate: 0.5, min_lr: 0.0}
sparsity: {sparsity_type: DENSE}
)");
  std::ostringstream log, straight_metrics, stopped_metrics, resumed_metrics;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("plateau_straight");
  straight.metrics = &straight_metrics;
  straight.log = &log;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << log.str();

  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("plateau_interrupted");
  interrupted.metrics = &stopped_metrics;
  interrupted.stop_after_steps = 5;  // Mid-way through the third epoch (2 steps per epoch).
  interrupted.resume = true;
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << log.str();
  interrupted.stop_after_steps = -1;
  interrupted.metrics = &resumed_metrics;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << log.str();

  const std::vector<double> want = {1e-6, 1e-6, 5e-7, 2.5e-7};
  std::vector<double> straight_lrs, resumed_lrs;
  for (const std::string& line : MetricLines(straight_metrics.str(), "epoch"))
    straight_lrs.push_back(std::stod(MetricFields(line).at("lr")));
  for (const std::string& line : MetricLines(resumed_metrics.str(), "epoch"))
    resumed_lrs.push_back(std::stod(MetricFields(line).at("lr")));
  ASSERT_EQ(straight_lrs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(straight_lrs[i], want[i], 1e-15) << "epoch " << i;
  ASSERT_EQ(resumed_lrs.size(), 2u);  // Epochs 2 and 3.
  EXPECT_EQ(resumed_lrs[0], straight_lrs[2]);
  EXPECT_EQ(resumed_lrs[1], straight_lrs[3]);
}

// Dynamic sparsity (§7): masks go into the checkpoint, so a resumed run matches a straight one; per-layer
// metrics; validate-only listing.
TEST(TrainerTest, DynamicSparsityResumesAndReportsPerLayer) {
  const auto config = ParseValidExperiment(R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 256, eval_subset: 64, batch_size: 32}
optimizer: {lr: 0.002}
schedule: {epochs: 2}
sparsity:
  - {param_filter: "blocks.*.mlp.*.weight", algorithm: rigl, sparsity: 0.9, update: {freq: 2, start: 3},
     drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 16}}
  - {algorithm: set, sparsity: 0.5, update: {freq: 3}}
)");
  std::ostringstream sink, straight_metrics;
  TrainerOptions straight;
  straight.out_dir = TestTempDir("dyn_straight");
  straight.log = &sink;
  straight.metrics = &straight_metrics;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();
  auto epoch = LastMetricFields(straight_metrics.str(), "epoch");
  // 32x128 weights: round(0.9 * 4096) = 3686 pruned.
  EXPECT_NEAR(std::stod(epoch["sparsity/blocks.1.mlp.fc2.weight"]), 3686.0 / 4096, 1e-9)
      << straight_metrics.str();
  EXPECT_EQ(epoch["target_sparsity/blocks.1.mlp.fc2.weight"], "0.9");
  EXPECT_EQ(epoch["sparsity/blocks.0.attn.qkv.weight"], "0.5");

  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir("dyn_interrupted");
  interrupted.metrics = &sink;
  interrupted.stop_after_steps = 10;  // After RigL's update at step 9, SET's at step 9.
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  interrupted.resume = true;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();

  auto a = ExpectSameCheckpointWeights("vit_nano_patch7_28", straight.out_dir, interrupted.out_dir);
  const auto fc2 = a->named_parameters()["blocks.1.mlp.fc2.weight"];
  EXPECT_GE(fc2.eq(0).sum().item<int64_t>(), std::llround(0.9 * fc2.numel()));

  std::ostringstream listing;
  EXPECT_EQ(DescribeRun(config, listing), kExitOk);
  EXPECT_NE(listing.str().find("blocks.1.mlp.fc2.weight [32, 128]: group 0 RIGL sparsity 0.9"),
            std::string::npos)
      << listing.str();
  EXPECT_NE(listing.str().find("blocks.0.attn.qkv.weight [96, 32]: group 1 SET sparsity 0.5"),
            std::string::npos)
      << listing.str();
  EXPECT_NE(listing.str().find("pos_embed [1, 17, 32]: dense"), std::string::npos) << listing.str();

  auto bad = config;
  bad.sparsity.dynamic[0].param_filter = {"blocks.*.ffn.*"};
  try {
    std::ostringstream ignored;
    DescribeRun(bad, ignored);
    FAIL() << "expected a usage error";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(
        std::string(e.what()).find("sparsity.dynamic[0].param_filter[0]: value 'blocks.*.ffn.*' matches no "
                                   "parameter"),
        std::string::npos)
        << e.what();
  }
}

TEST(TrainerTest, DataThatDoesNotFitTheModelIsADataError) {
  const auto config = ParseValidExperiment(R"(
model: {name: vit_nano_patch7_28}
data: {dataset: shards, path: /nonexistent/shards, batch_size: 8}
)");
  TrainerOptions options;
  options.out_dir = TestTempDir("nodata");
  std::ostringstream sink;
  options.metrics = options.log = &sink;
  try {
    RunTraining(config, options);
    FAIL() << "expected a data error";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitData);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/shards"), std::string::npos) << e.what();
  }
}

TEST(TrainerTest, DescribeRunListsSparseLayers) {
  const auto config = ParseValidExperiment(R"(
model: {name: vit_nano_patch7_28}
data: {dataset: fashion_mnist, train_subset: 512, batch_size: 64}
schedule: {epochs: 4}
sparsity: {sparsity_type: SRSTE, n_sparsity: 1, m_sparsity: 8, sparsity_loc: FF, dense_steps: 0.25}
)");
  std::ostringstream out;
  EXPECT_EQ(DescribeRun(config, out), kExitOk);
  EXPECT_NE(out.str().find("27978 parameters"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("from epoch 0: phase dense"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("from epoch 1: phase sparse, N:M 1:8"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("blocks.1.mlp.fc2 [ff] 32x128 -> 1:8"), std::string::npos) << out.str();
}

// --validate-only describes the model the spec's model_kwargs build (issue 28): the 128/6/4/patch-4 ViT,
// whose 1,199,882 parameters are timm's count (worker/trainer/models/testdata/timm_model_kwargs.txt).
TEST(TrainerTest, DescribeRunSeesModelKwargs) {
  const auto config = ParseValidExperiment(R"(
model: {name: vit_micro_patch4_28, embed_dim: 128, depth: 6, num_heads: 4, patch_size: 4}
data: {dataset: fashion_mnist, train_subset: 512, batch_size: 64}
sparsity: {sparsity_type: SRSTE, n_sparsity: 1, m_sparsity: 8, sparsity_loc: FF}
)");
  std::ostringstream out;
  EXPECT_EQ(DescribeRun(config, out), kExitOk);
  EXPECT_NE(out.str().find("1199882 parameters"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("blocks.5.mlp.fc1 [ff] 512x128 -> 1:8"), std::string::npos) << out.str();
}

TEST(OptimizerTest, TimmNoWeightDecayGroups) {
  auto vit = CreateModel(*LookupModel("vit_nano_patch7_28"));
  auto params = vit->named_parameters();
  EXPECT_TRUE(NoWeightDecay("pos_embed", params["pos_embed"]));
  EXPECT_TRUE(NoWeightDecay("cls_token", params["cls_token"]));
  EXPECT_TRUE(NoWeightDecay("blocks.0.norm1.weight", params["blocks.0.norm1.weight"]));
  EXPECT_TRUE(NoWeightDecay("blocks.0.attn.qkv.bias", params["blocks.0.attn.qkv.bias"]));
  EXPECT_FALSE(NoWeightDecay("blocks.0.attn.qkv.weight", params["blocks.0.attn.qkv.weight"]));
  EXPECT_FALSE(NoWeightDecay("patch_embed.proj.weight", params["patch_embed.proj.weight"]));
  auto swin = CreateModel(*LookupModel("swinv2_micro_window7_28"));
  auto sp = swin->named_parameters();
  EXPECT_TRUE(NoWeightDecay("layers.0.blocks.0.attn.logit_scale", sp["layers.0.blocks.0.attn.logit_scale"]));
  EXPECT_TRUE(NoWeightDecay("layers.0.blocks.0.attn.cpb_mlp.0.weight",
                            sp["layers.0.blocks.0.attn.cpb_mlp.0.weight"]));
  EXPECT_FALSE(
      NoWeightDecay("layers.1.downsample.reduction.weight", sp["layers.1.downsample.reduction.weight"]));
  OptimizerConfig oc;
  oc.weight_decay = 0.05;
  auto adamw = MakeAdamW(*vit, oc);
  ASSERT_EQ(adamw->param_groups().size(), 2u);
  EXPECT_EQ(adamw->param_groups()[0].params().size(), 1u + 2u * 4u + 1u);  // patch proj, 4 per block, head
  EXPECT_DOUBLE_EQ(
      static_cast<torch::optim::AdamWOptions&>(adamw->param_groups()[1].options()).weight_decay(), 0.0);
  EXPECT_DOUBLE_EQ(
      static_cast<torch::optim::AdamWOptions&>(adamw->param_groups()[0].options()).weight_decay(), 0.05);
}

// The multi-tensor clip (one _foreach_norm, one _foreach_mul_) against torch.nn.utils.clip_grad_norm_'s
// arithmetic per gradient, in double: the same norm, the same scaled gradients; nothing scaled below the
// bound.
TEST(OptimizerTest, ClipGradNormMatchesThePerGradientFormula) {
  torch::manual_seed(11);
  std::vector<torch::Tensor> params;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{64, 32}, {32}, {7, 3, 5}, {1}}) {
    params.push_back(torch::zeros(shape).requires_grad_(true));
    params.back().mutable_grad() = torch::randn(shape) * 3.0;
  }
  params.push_back(torch::zeros({4}).requires_grad_(true));  // No gradient: skipped.
  std::vector<torch::Tensor> before;
  double sum_squares = 0;
  for (size_t i = 0; i + 1 < params.size(); ++i) {
    before.push_back(params[i].grad().clone());
    sum_squares += params[i].grad().to(torch::kDouble).pow(2).sum().item<double>();
  }
  const double norm = std::sqrt(sum_squares), max_norm = norm / 4;
  const torch::Tensor total = ClipGradNorm(params, max_norm);
  EXPECT_NEAR(total.item<double>(), norm, 1e-5 * norm);
  const double coefficient = max_norm / (norm + 1e-6);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(torch::allclose(params[i].grad(), before[i] * coefficient, 1e-5, 1e-6)) << "gradient " << i;
  }
  const torch::Tensor unchanged = params[0].grad().clone();
  ClipGradNorm(params, 1e9);  // Below the bound: the coefficient is capped at 1.
  EXPECT_TRUE(torch::equal(params[0].grad(), unchanged));
}

// Each rank's evaluation batches cover its images once, in order; the distinct sizes are what the 2:4 layers'
// set-up runs.
TEST(EvaluatorTest, SplitCoversEveryImageOnce) {
  std::vector<int64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    const EvalSplit split(/*size=*/20, /*batch_size=*/12, rank, /*world=*/3);  // 4 per batch: 7, 7, 6 images.
    for (int64_t b = 0; b < split.batches(); ++b) {
      for (int64_t i : split.Indices(b)) seen.push_back(i);
    }
    EXPECT_EQ(split.BatchSizes(), (rank < 2 ? std::set<int64_t>{4, 3} : std::set<int64_t>{4, 2})) << rank;
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(20);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);
  EXPECT_EQ(EvalSplit(8, 4, 0, 1).BatchSizes(), std::set<int64_t>{4});
}

// Batches built ahead on loader threads give exactly what building them in the loop gives.
TEST(EvaluatorTest, PrefetchedEvaluationEqualsTheInLoopOne) {
  torch::manual_seed(2);
  auto model = CreateModel(*LookupModel("vit_nano_patch7_28"));
  const SyntheticDataset data(ImageShape{1, 28, 28}, 10, /*size=*/53, /*seed=*/9);
  const Normalization norm{{0.5f}, {0.5f}};
  Distributed single(DistributedEnv{}, std::chrono::milliseconds(1000));
  const EvalResult in_loop =
      Evaluate(*model, data, norm, 16, single, torch::kCPU, c10::ScalarType::Undefined, /*loader_threads=*/0);
  const EvalResult ahead =
      Evaluate(*model, data, norm, 16, single, torch::kCPU, c10::ScalarType::Undefined, /*loader_threads=*/2);
  EXPECT_EQ(in_loop.images, 53);
  EXPECT_EQ(ahead.images, 53);
  EXPECT_EQ(ahead.loss, in_loop.loss);
  EXPECT_EQ(ahead.top1, in_loop.top1);
  EXPECT_EQ(ahead.top5, in_loop.top5);
}

// The worst files travel between ranks as text: tabs and newlines in a message must not break the records,
// and at most kWorstFilesNamed come back, worst first, then by name.
TEST(DecodeFailuresAcrossRanksTest, WorstFilesSurviveTheGatherAndTheThresholdNamesThem) {
  Distributed single(DistributedEnv{}, std::chrono::milliseconds(1000));
  std::vector<DecodeFailure> failed;
  for (int i = 0; i < 7; ++i) failed.push_back({"f" + std::to_string(i) + ".jpg", "bad\tdata\nhere", i % 3});
  const auto worst = WorstFailuresOfAllRanks(failed, single);
  ASSERT_EQ(worst.size(), static_cast<size_t>(kWorstFilesNamed));
  EXPECT_EQ(worst[0].where, "f2.jpg");
  EXPECT_EQ(worst[0].count, 2);
  EXPECT_EQ(worst[1].where, "f5.jpg");
  EXPECT_EQ(worst[2].where, "f1.jpg");
  EXPECT_EQ(worst[0].message, "bad data here");
  std::vector<SplitDecodeFailures> splits = {{"training images", 4, 0, 1000, {}},
                                             {"evaluation images", 4, 2, 1000, failed}};
  SumDecodeFailures(splits, single);
  const absl::Status over = CheckDecodeFailures(splits, single);
  EXPECT_TRUE(absl::IsDataLoss(over));
  EXPECT_NE(over.message().find("2 evaluation images of 1000 in epoch 4 could not be decoded"),
            std::string::npos)
      << over.message();
  EXPECT_NE(over.message().find("f2.jpg (2x): bad data here"), std::string::npos) << over.message();
  splits[1].count = 1;
  EXPECT_TRUE(CheckDecodeFailures(splits, single).ok());
}

TEST(LossTest, LabelSmoothingAndMixup) {
  auto targets = SmoothedTargets(torch::tensor({2, 0}, torch::kInt64), 4, 0.1);
  EXPECT_FLOAT_EQ(targets[0][2].item<float>(), 0.925f);
  EXPECT_FLOAT_EQ(targets[0][1].item<float>(), 0.025f);
  EXPECT_NEAR(targets.sum().item<float>(), 2.0f, 1e-6);
  auto logits = torch::tensor({{0.0f, 0.0f, 10.0f, 0.0f}, {10.0f, 0.0f, 0.0f, 0.0f}});
  auto hard = SmoothedTargets(torch::tensor({2, 0}, torch::kInt64), 4, 0.0);
  EXPECT_NEAR(
      SoftTargetCrossEntropy(logits, hard).item<float>(),
      torch::nn::functional::cross_entropy(logits, torch::tensor({2, 0}, torch::kInt64)).item<float>(), 1e-6);
  auto images = torch::randn({2, 1, 2, 2});
  auto mixed_images = images.clone();
  MixupOptions options;
  options.mixup_alpha = 0.4;
  options.label_smoothing = 0.0;
  options.num_classes = 4;
  MixupRandom rng(9);
  const auto mixed_targets =
      ApplyMixup(mixed_images, torch::tensor({2, 0}, torch::kInt64), options, true, rng);
  const double lambda = mixed_targets[0][2].item<double>();
  EXPECT_GT(lambda, 0.0);
  EXPECT_LT(lambda, 1.0);
  EXPECT_TRUE(torch::allclose(mixed_images[0], images[0] * lambda + images[1] * (1 - lambda)));
}

TEST(FlopsTest, VitBaseMatchesTheKnownCount) {
  // ViT-B/16 at 224: 17.56 GMACs of matmuls = 35.1 GFLOPs.
  EXPECT_NEAR(ForwardFlops(*LookupModel("vit_base_patch16_224")) / 1e9, 35.1, 0.1);
  // Swin-T-class V2 at 256, window 8: about 5.9 GMACs.
  EXPECT_NEAR(ForwardFlops(*LookupModel("swinv2_tiny_window8_256")) / 1e9, 11.8, 0.6);
}

TEST(MetricsWriterTest, FlatJson) {
  MetricLine line("epoch");
  line.Add("epoch", 3).Add("top1", 0.5).Add("nm_stage", "1:8").Add("bad", std::nan("")).Add("q\"", "a\\b");
  EXPECT_EQ(line.ToJson(),
            R"({"kind":"epoch","epoch":3,"top1":0.5,"nm_stage":"1:8","bad":null,"q\"":"a\\b"})");
}

}  // namespace
}  // namespace nmsparse
