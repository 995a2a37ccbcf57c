#include "schemas/experiment_config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "schemas/content_hash.h"
#include "schemas/testing/generic_paths.h"
#include "schemas/train_steps.h"

namespace nmsparse {
namespace {

constexpr char kMicro[] = R"(name: micro-srste
seed: 7
model:
  name: vit_micro_patch4_28
  drop_path_rate: 0.1
data:
  dataset: fashion_mnist
  train_subset: 10000
  batch_size: 128
optimizer:
  lr: 0.002
  weight_decay: 0.05
schedule:
  epochs: 3
  warmup_epochs: 0.5
resources:
  gpus: 2
  cpu_threads: 1
sparsity:
  sparsity_type: SRSTE
  n_sparsity: 1
  m_sparsity: 8
  sparsity_loc: FF,Q,K,V
)";

ExperimentConfig MustParse(const std::string& text) {
  auto config = ParseExperimentYaml(text, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig();
}

std::string ParseError(const std::string& text) {
  auto config = ParseExperimentYaml(text, "exp.yaml");
  EXPECT_FALSE(config.ok()) << text;
  return std::string(config.status().message());
}

std::string ValidateError(const std::string& text) {
  absl::Status st = ValidateExperiment(MustParse(text));
  EXPECT_FALSE(st.ok()) << text;
  return std::string(st.message());
}

TEST(ExperimentConfigTest, ParsesNestedSpecWithDefaults) {
  ExperimentConfig c = MustParse(kMicro);
  EXPECT_EQ(c.name, "micro-srste");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.model.name, "vit_micro_patch4_28");
  EXPECT_DOUBLE_EQ(c.model.drop_path_rate, 0.1);
  EXPECT_EQ(c.data.train_subset, 10000);
  EXPECT_EQ(c.data.eval_batch_size, 256);
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.002);
  EXPECT_DOUBLE_EQ(c.optimizer.beta2, 0.999);
  EXPECT_EQ(c.schedule.epochs, 3);
  EXPECT_EQ(c.resources.gpus, 2);
  EXPECT_EQ(c.sparsity.sparsity_type, SparsityType::kSrste);
  EXPECT_EQ(c.sparsity.nm_qkv, (NM{1, 8}));
  EXPECT_TRUE(ValidateExperiment(c).ok()) << ValidateExperiment(c);

  ExperimentConfig defaults = MustParse("model: {name: vit_nano_patch7_28}\n");
  EXPECT_EQ(defaults.data.dataset, "fashion_mnist");
  EXPECT_EQ(defaults.data.batch_size, 128);
  EXPECT_EQ(defaults.optimizer.name, "adamw");
  EXPECT_DOUBLE_EQ(defaults.optimizer.weight_decay, 0.05);
  EXPECT_DOUBLE_EQ(defaults.optimizer.eps, 1e-8);
  EXPECT_EQ(defaults.schedule.epochs, 1);
  EXPECT_EQ(defaults.resources.gpus, 1);
  EXPECT_EQ(defaults.sparsity.sparsity_type, SparsityType::kDense);
}

TEST(ExperimentConfigTest, ErrorsNameFileLineKeyAndValue) {
  EXPECT_EQ(ParseError("model:\n  name: vit_nano_patch7_28\ndata:\n  batch_size: 0\n"),
            "exp.yaml:4: data.batch_size: value 0 is out of range: must be >= 1");
  EXPECT_EQ(ParseError("data:\n  dataset: IMAGENET\n"),
            "exp.yaml:2: data.dataset: value 'IMAGENET' is not one of fashion_mnist, synthetic, shards, "
            "imagefolder, packed, "
            "cifar10, cifar100");
  EXPECT_EQ(ParseError("optimizer:\n  name: sgd\n"),
            "exp.yaml:2: optimizer.name: value 'sgd' is not one of adamw, lion");
  EXPECT_EQ(ParseError("schedule:\n  epochs: 3\n  warmup: 1\n"),
            "exp.yaml:3: schedule.warmup: unknown key; known keys: epochs, warmup_epochs, min_lr, warmup_lr, "
            "log_every_steps, log_points, sparsity_diagnostics, sched, cooldown_epochs, warmup_prefix, "
            "sched_on_updates, "
            "lr_k_decay, lr_cycle_mul, "
            "lr_cycle_decay, lr_cycle_limit, decay_epochs, decay_milestones, decay_rate, patience_epochs");
  EXPECT_EQ(ParseError("modle: {name: x}\n"),
            "exp.yaml:1: modle: unknown key (did you mean 'model'?); known keys: name, seed, model, data, "
            "optimizer, schedule, resources, "
            "sparsity, semi_structured");
  EXPECT_EQ(ParseError("seed: -1\n"), "exp.yaml:1: seed: value -1 is out of range: must be >= 0");
  EXPECT_EQ(ParseError("sparsity:\n  m_sparsity: 0\n"),
            "exp.yaml:2: sparsity.m_sparsity: value 0 is out of range: must be >= 1");
  EXPECT_EQ(ParseError("data: [1]\n"), "exp.yaml:1: data: value [1] is not a map");
  EXPECT_EQ(ParseError("model: {name: a\n"), "exp.yaml:2: YAML syntax error: end of map flow not found");
  // Issue 27: "YAML syntax error: bad file" before.
  EXPECT_EQ(
      ParseError("data: " + std::string(600, '[') + std::string(600, ']') + "\n"),
      "exp.yaml: nested too deeply: maps and lists inside each other go past the YAML parser's limit of 500 "
      "levels");
  EXPECT_EQ(ParseError("data:\n  hflip: 0.5\n  hflip: 0.2\n"), "exp.yaml:3: data.hflip: duplicate key");
  EXPECT_EQ(ParseError("- 1\n"), "exp.yaml:1: (top level): expected a map of experiment keys");
  auto missing = LoadExperimentFile("/nonexistent/exp.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

// Issue 22: `epochs: 4e9` said "must be >= 1". A value past a key's type names the whole range.
TEST(ExperimentConfigTest, ValuesPastTheKeysTypeSayTheyAreOutOfRange) {
  EXPECT_EQ(ParseError("schedule:\n  epochs: 4e9\n"),
            "exp.yaml:2: schedule.epochs: value 4e9 is out of range: must be in [1, 2147483647]");
  EXPECT_EQ(ParseError("schedule:\n  epochs: 4000000000\n"),
            "exp.yaml:2: schedule.epochs: value 4000000000 is out of range: must be in [1, 2147483647]");
  EXPECT_EQ(ParseError("data:\n  batch_size: 99999999999999999999\n"),
            "exp.yaml:2: data.batch_size: value 99999999999999999999 is out of range: must be in [1, "
            "2147483647]");
  EXPECT_EQ(ParseError("seed: 1e30\n"),
            "exp.yaml:1: seed: value 1e30 is out of range: must be in [0, 9223372036854775807]");
  EXPECT_EQ(ParseError("seed: -99999999999999999999\n"),
            "exp.yaml:1: seed: value -99999999999999999999 is out of range: must be >= 0");
  EXPECT_EQ(ParseError("schedule:\n  epochs: 0\n"),
            "exp.yaml:2: schedule.epochs: value 0 is out of range: must be >= 1");
  EXPECT_EQ(MustParse("model: {name: vit_nano_patch7_28}\nschedule: {epochs: 4e1}\n").schedule.epochs, 40);
}

TEST(ExperimentConfigTest, CaseInsensitiveValues) {
  ExperimentConfig c = MustParse(
      "model: {name: vit_nano_patch7_28}\ndata: {dataset: Synthetic}\noptimizer: {name: AdamW}\n"
      "sparsity: {sparsity_type: structured_nm, decay_type: linear, structure_decay_flag: True}\n");
  EXPECT_EQ(c.data.dataset, "synthetic");
  EXPECT_EQ(c.optimizer.name, "adamw");
  EXPECT_EQ(c.sparsity.decay_type, DecayType::kLinear);
  EXPECT_TRUE(c.sparsity.structure_decay_flag);
}

TEST(ExperimentConfigTest, CanonicalYamlRoundTrips) {
  ExperimentConfig c = MustParse(kMicro);
  c.sparsity.phases = {{PhaseKind::kSparse, 0.8}, {PhaseKind::kDense, 0.2}};
  c.optimizer.lr = 0.1 + 0.2;  // Not representable in short decimal: must still round-trip exactly.
  const std::string canonical = CanonicalYaml(c);
  ExperimentConfig again = MustParse(canonical);
  EXPECT_TRUE(again == c) << canonical;
  EXPECT_EQ(CanonicalYaml(again), canonical);
  EXPECT_NE(canonical.find("sparsity_type: SRSTE\n"), std::string::npos);
  EXPECT_NE(canonical.find("  dataset: fashion_mnist\n"), std::string::npos);
  EXPECT_EQ(canonical.rfind("name: micro-srste\nseed: 7\nmodel:\n  name: vit_micro_patch4_28\n", 0), 0u)
      << canonical;
  // Every key appears, defaults included.
  for (const char* key : {"eval_batch_size:", "grad_accum_steps:", "log_every_steps:", "cpu_threads:",
                          "structure_decay_start_multiple:", "phases:"}) {
    EXPECT_NE(canonical.find(key), std::string::npos) << key;
  }
}

// Issue 40: a spec without schedule keys logs tens of step points, and its canonical form (so its hash) is
// what it was before log_points existed; only a log_points other than the default is written.
TEST(ExperimentConfigTest, DefaultLogIntervalGivesTensOfPointsWithoutChangingTheCanonicalForm) {
  const ExperimentConfig c = MustParse(kMicro);
  const std::string canonical = CanonicalYaml(c);
  EXPECT_NE(canonical.find("  log_every_steps: 0\n"), std::string::npos) << canonical;
  EXPECT_EQ(canonical.find("log_points"), std::string::npos) << canonical;
  for (int64_t total : {1, 24, 25, 26, 49, 50, 128, 1000, 123457}) {
    const int64_t every = c.schedule.LogEverySteps(total);
    ASSERT_GE(every, 1) << total;
    EXPECT_GE(total / every, std::min<int64_t>(total, 25)) << total;  // Tens of points,
    EXPECT_LT(total / every, 50) << total;                            // not hundreds.
  }
  ExperimentConfig off = c;
  off.schedule.log_points = 0;
  EXPECT_EQ(off.schedule.LogEverySteps(1000), 0);
  EXPECT_NE(CanonicalYaml(off).find("  log_points: 0\n"), std::string::npos);
  EXPECT_NE(ContentHash(off), ContentHash(c));
  ExperimentConfig every = c;
  every.schedule.log_every_steps = 7;
  EXPECT_EQ(every.schedule.LogEverySteps(1000), 7);
  EXPECT_EQ(ParseError("schedule:\n  log_points: -1\n"),
            "exp.yaml:2: schedule.log_points: value -1 is out of range: must be in [0, 10000]");
}

TEST(ExperimentConfigTest, HashIgnoresFormattingButNotValues) {
  const std::string reordered = R"(sparsity:
  sparsity_loc: [q, k, v, ff]
  m_sparsity: 8
  n_sparsity: 1
  sparsity_type: srste
resources: {cpu_threads: 1, gpus: 2}
schedule: {warmup_epochs: 5e-1, epochs: 3}
optimizer: {weight_decay: 0.050, lr: 2.0e-3, beta1: 0.9}
data: {batch_size: 128, train_subset: 10000, dataset: FASHION_MNIST}
model: {drop_path_rate: .1, name: vit_micro_patch4_28}
seed: 7
name: micro-srste
)";
  const std::string h1 = ContentHash(MustParse(kMicro));
  EXPECT_EQ(h1.size(), 64u);
  EXPECT_EQ(h1.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(ContentHash(MustParse(reordered)), h1);
  EXPECT_EQ(ContentHash(MustParse(CanonicalYaml(MustParse(kMicro)))), h1);

  ExperimentConfig other = MustParse(kMicro);
  other.sparsity.nm.m = 16;
  EXPECT_NE(ContentHash(other), h1);
  other = MustParse(kMicro);
  other.seed = 8;
  EXPECT_NE(ContentHash(other), h1);
  other = MustParse(kMicro);
  other.optimizer.lr = 0.0020000000000000001;  // Same double: same hash.
  EXPECT_EQ(ContentHash(other), h1);
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// model.initial_checkpoint_sha256 (issue 39): the weights file's digest is part of the canonical form and the
// hash, so runs from different weights at one path never hash alike; sha256sum's upper or lower case reads as
// one value; anything but 64 hex digits is refused naming the key; without it the canonical text (and every
// stored hash) is what it was.
TEST(ExperimentConfigTest, InitialCheckpointDigestIsPartOfTheHash) {
  const std::string a(64, 'a'), b(64, 'b');
  auto from = [](const std::string& digest) {
    return "model: {name: vit_micro_patch4_28, initial_checkpoint: /data/w.safetensors" +
           (digest.empty() ? std::string() : ", initial_checkpoint_sha256: " + digest) + "}\n";
  };
  const ExperimentConfig with_a = MustParse(from(a));
  EXPECT_EQ(with_a.model.initial_checkpoint_sha256, a);
  EXPECT_NE(ContentHash(with_a), ContentHash(MustParse(from(b))));
  EXPECT_EQ(ContentHash(MustParse(from(absl::AsciiStrToUpper(a)))), ContentHash(with_a));
  EXPECT_NE(CanonicalYaml(with_a).find("initial_checkpoint_sha256: " + a), std::string::npos);
  EXPECT_EQ(CanonicalYaml(MustParse(from(""))).find("sha256"), std::string::npos);
  EXPECT_EQ(ContentHash(MustParse(CanonicalYaml(with_a))), ContentHash(with_a));
  EXPECT_EQ(
      ParseError(from("abc")),
      "exp.yaml:1: model.initial_checkpoint_sha256: value 'abc' is not a SHA-256 digest (64 hex digits)");
  EXPECT_NE(ParseError(from(std::string(63, 'a') + "g")).find("is not a SHA-256 digest"), std::string::npos);
}

// A digest without its file would count in the content hash of a run that loads no weights: validation
// refuses it by the key, in the nested and the flat (timm) form; with its file it validates.
TEST(ExperimentConfigTest, InitialCheckpointDigestNeedsItsFile) {
  const std::string a(64, 'a');
  const std::string refusal = "model.initial_checkpoint_sha256: " + a +
                              " is given without model.initial_checkpoint: a digest is of the weights file a "
                              "run starts from; give the file, or leave the digest out";
  EXPECT_EQ(ValidateError("model: {name: vit_micro_patch4_28, initial_checkpoint_sha256: " + a + "}\n"),
            refusal);
  EXPECT_EQ(ValidateError("model: vit_micro_patch4_28\ninitial_checkpoint_sha256: " + a + "\n"), refusal);
  const ExperimentConfig with_file = MustParse(
      "model: {name: vit_micro_patch4_28, initial_checkpoint: "
      "/data/w.safetensors, initial_checkpoint_sha256: " +
      a + "}\n");
  EXPECT_TRUE(ValidateExperiment(with_file).ok()) << ValidateExperiment(with_file);
}

// resources.precision: fp32 (default) or bf16, case-insensitive; a bad value names key, value and line; bf16
// is part of the canonical form and hash, fp32 is left out of both so that older runs keep their hashes.
// timm's Mixup pairs image i with image B-1-i of each rank's batch: an odd one is refused at validation,
// naming the key and value; cutmix_min/cutmix_max need min < max.
TEST(ExperimentConfigTest, MixupNeedsEvenRankBatchesAndOrderedCutmixBounds) {
  auto with = [](const std::string& batch, const std::string& optimizer) {
    return absl::StrReplaceAll(kMicro, {{"  batch_size: 128\n", "  batch_size: " + batch + "\n"},
                                        {"  weight_decay: 0.05\n", "  weight_decay: 0.05\n" + optimizer}});
  };
  EXPECT_EQ(ValidateError(with("126", "  mixup_alpha: 0.8\n")),
            "data.batch_size: value 126 gives each rank batches of 63 images (batch_size / resources.gpus), "
            "which must be even with Mixup/CutMix (timm mixes image i with image B-1-i)");
  EXPECT_EQ(ValidateError(with("126", "  cutmix_alpha: 1\n")).substr(0, 26), "data.batch_size: value 126");
  EXPECT_TRUE(ValidateExperiment(MustParse(with("126", ""))).ok());  // No mixing: any batch.
  EXPECT_TRUE(ValidateExperiment(MustParse(with("124", "  mixup_alpha: 0.8\n"))).ok());
  EXPECT_EQ(ValidateError(with("128", "  cutmix_min: 0.8\n  cutmix_max: 0.2\n")),
            "optimizer.cutmix_max: value 0.2 is out of range: must be > optimizer.cutmix_min (0.8)");
  // The new keys round-trip through the canonical text, which leaves them out at their defaults.
  const ExperimentConfig mixed =
      MustParse(with("128",
                     "  mixup_alpha: 0.8\n  cutmix_min: 0.2\n  cutmix_max: 0.8\n  mixup_prob: 0\n"
                     "  mixup_mode: PAIR\n  mixup_off_epoch: 2\n  bce_loss: true\n  bce_target_thresh: 0.2\n"
                     "  bce_sum: true\n"));
  EXPECT_EQ(mixed.optimizer.mixup_mode, "pair");
  EXPECT_TRUE(MustParse(CanonicalYaml(mixed)) == mixed);
  EXPECT_EQ(CanonicalYaml(MustParse(kMicro)).find("bce"), std::string::npos);
}

TEST(ExperimentConfigTest, PrecisionKey) {
  const ExperimentConfig fp32 = MustParse(kMicro);
  EXPECT_EQ(fp32.resources.precision, "fp32");
  auto with_precision = [](const std::string& value) {
    return absl::StrReplaceAll(kMicro,
                               {{"  cpu_threads: 1\n", "  cpu_threads: 1\n  precision: " + value + "\n"}});
  };
  const ExperimentConfig bf16 = MustParse(with_precision("BF16"));
  EXPECT_EQ(bf16.resources.precision, "bf16");
  EXPECT_TRUE(ValidateExperiment(bf16).ok());
  EXPECT_NE(ContentHash(bf16), ContentHash(fp32));
  EXPECT_FALSE(bf16 == fp32);
  EXPECT_NE(CanonicalYaml(bf16).find("resources:\n  gpus: 2\n  cpu_threads: 1\n  precision: bf16\n"),
            std::string::npos)
      << CanonicalYaml(bf16);
  EXPECT_EQ(testing::CanonicalYamlByEmitter(bf16), CanonicalYaml(bf16));
  EXPECT_TRUE(MustParse(CanonicalYaml(bf16)) == bf16);
  // fp32 written out: the same config, canonical text and hash as leaving the key out.
  EXPECT_EQ(CanonicalYaml(MustParse(with_precision("fp32"))), CanonicalYaml(fp32));
  EXPECT_EQ(CanonicalYaml(fp32).find("precision"), std::string::npos);
  // The canonical text of an fp32 run is what it was before the key existed (pinned in sweep_pinned_test).
  EXPECT_NE(CanonicalYaml(fp32).find("resources:\n  gpus: 2\n  cpu_threads: 1\nsparsity:\n"),
            std::string::npos);
  EXPECT_EQ(ParseError("model: {name: vit_nano_patch7_28}\nresources:\n  gpus: 1\n  precision: fp16x\n"),
            "exp.yaml:4: resources.precision: value 'fp16x' is not one of fp32, bf16, fp16");
  EXPECT_EQ(ParseError("resources: {precision: 16}\n"),
            "exp.yaml:1: resources.precision: value '16' is not one of fp32, bf16, fp16");
  EXPECT_EQ(ParseError("resources: {precison: bf16}\n"),
            "exp.yaml:1: resources.precison: unknown key (did you mean 'precision'?); known keys: nodes, "
            "gpus, cpu_threads, precision");
}

// resources.nodes: K nodes of `gpus` ranks each. 1 (the default) is left out of the canonical text and hash,
// so that every single-node run keeps its hash; the global batch is split over nodes x gpus ranks.
TEST(ExperimentConfigTest, NodesKey) {
  const ExperimentConfig one = MustParse(kMicro);
  EXPECT_EQ(one.resources.nodes, 1);
  auto with_nodes = [](const std::string& value) {
    return absl::StrReplaceAll(kMicro, {{"  gpus: 2\n", "  nodes: " + value + "\n  gpus: 2\n"}});
  };
  const ExperimentConfig written_one = MustParse(with_nodes("1"));
  EXPECT_TRUE(written_one == one);
  EXPECT_EQ(CanonicalYaml(written_one), CanonicalYaml(one));
  EXPECT_EQ(ContentHash(written_one), ContentHash(one));
  EXPECT_EQ(CanonicalYaml(one).find("nodes"), std::string::npos);
  const ExperimentConfig two = MustParse(with_nodes("2"));
  EXPECT_EQ(two.resources.nodes, 2);
  EXPECT_NE(ContentHash(two), ContentHash(one));
  EXPECT_NE(CanonicalYaml(two).find("resources:\n  nodes: 2\n  gpus: 2\n"), std::string::npos)
      << CanonicalYaml(two);
  EXPECT_TRUE(MustParse(CanonicalYaml(two)) == two);
  EXPECT_EQ(testing::CanonicalYamlByEmitter(two), CanonicalYaml(two));
  EXPECT_TRUE(ValidateExperiment(two).ok());  // 128 over 2 x 2 ranks.
  EXPECT_EQ(ParseError("resources: {nodes: 0}\n"),
            "exp.yaml:1: resources.nodes: value 0 is out of range: must be in [1, 1024]");
  EXPECT_EQ(
      ValidateError("model: {name: vit_nano_patch7_28}\ndata: {batch_size: 100}\n"
                    "resources: {nodes: 3, gpus: 2}\n"),
      "data.batch_size: value 100 is not divisible by resources.nodes x resources.gpus (3 x 2 = 6): the "
      "global batch is split evenly over ranks");
  EXPECT_EQ(
      ValidateError(absl::StrReplaceAll(
          with_nodes("2"), {{"  batch_size: 128\n", "  batch_size: 132\n"},
                            {"  weight_decay: 0.05\n", "  weight_decay: 0.05\n  mixup_alpha: 0.8\n"}})),
      "data.batch_size: value 132 gives each rank batches of 33 images (batch_size / (resources.nodes x "
      "resources.gpus)), which must be even with Mixup/CutMix (timm mixes image i with image B-1-i)");
}

TEST(ExperimentConfigTest, ValidationChecksModelDataAndShapes) {
  EXPECT_EQ(ValidateError("data: {dataset: synthetic}\n"),
            "model.name: missing: every experiment names a model");
  // An unknown name is refused where it is written (issue 40), and by validation of a config made in code.
  EXPECT_EQ(ParseError("model: {name: vit_giant}\n")
                .rfind("exp.yaml:1: model.name: unknown model 'vit_giant'; known", 0),
            0u);
  ExperimentConfig giant = MustParse(kMicro);
  giant.model.name = "vit_giant";
  EXPECT_EQ(std::string(ValidateExperiment(giant).message())
                .rfind("model.name: unknown model 'vit_giant'; known", 0),
            0u);
  EXPECT_EQ(ValidateError("model: {name: vit_base_patch16_224}\n"),
            "model: fashion_mnist images are 28x28x1 in 10 classes, but vit_base_patch16_224 is set up for "
            "224x224x3 in 1000 classes: set model.img_size, model.in_chans, model.num_classes");
  EXPECT_EQ(ValidateError("model: {name: vit_base_patch16_224}\ndata: {dataset: shards}\n"),
            "data.path: missing: the shards dataset needs the directory of its shards");
  EXPECT_EQ(
      ValidateError("model: {name: vit_nano_patch7_28}\ndata: {batch_size: 100}\nresources: {gpus: 3}\n"),
      "data.batch_size: value 100 is not divisible by resources.gpus (3): the global batch is split evenly "
      "over ranks");
  EXPECT_EQ(ValidateError("model: {name: vit_nano_patch7_28, img_size: 30}\ndata: {dataset: synthetic}\n"),
            "model.img_size: value 30 is not a multiple of the patch size 7 of vit_nano_patch7_28");
  EXPECT_EQ(ValidateError("model: {name: vit_nano_patch7_28}\nschedule: {epochs: 2, warmup_epochs: 3}\n"),
            "schedule.warmup_epochs: value 3 is out of range: must be <= schedule.epochs (2)");
  // issue 14: a batch larger than the training set (subset) made the run fail on its worker; now refused
  // here.
  EXPECT_EQ(ValidateError("model: {name: vit_nano_patch7_28}\ndata: {train_subset: 100, batch_size: 128}\n"),
            "data.batch_size: value 128 is larger than the 100 training images of fashion_mnist "
            "(data.train_subset 100): an epoch would make no optimizer step");
  EXPECT_EQ(ValidateError("model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic, synthetic_size: 64, "
                          "batch_size: 48}\noptimizer: {grad_accum_steps: 2}\n"),
            "data.batch_size: value 48 (x optimizer.grad_accum_steps 2 = 96) is larger than the 64 training "
            "images of synthetic (data.synthetic_size 64): an epoch would make no optimizer step");
}

TEST(ExperimentConfigTest, StepsPerEpochWhereTheSpecTells) {
  auto parse = [](const std::string& text) { return *ParseExperimentYaml(text, "exp.yaml"); };
  EXPECT_EQ(StepsPerEpoch(parse("data: {train_subset: 1000, batch_size: 64}\n")), 15);
  EXPECT_EQ(StepsPerEpoch(parse("data: {batch_size: 100}\n")), 600);
  EXPECT_EQ(StepsPerEpoch(parse("data: {dataset: synthetic, synthetic_size: 256, batch_size: 32}\n"
                                "optimizer: {grad_accum_steps: 2}\n")),
            4);
  EXPECT_EQ(StepsPerEpoch(parse("data: {dataset: shards, path: /x}\n")), std::nullopt);
  EXPECT_EQ(StepsPerEpoch(parse("data: {path: /my/fmnist}\n")), std::nullopt);
}

// S-STE (docs/sparsity-method.md §12) is 2:4 on linears: the recipe writes 2:4, and anything else is refused
// with the key that asks for it.
TEST(ExperimentConfigTest, SsteIsTwoFourOnLinearsOnly) {
  const std::string vit = "model: {name: vit_nano_patch7_28}\nsparsity: {";
  const ExperimentConfig sste = MustParse(vit + "recipe: SSTE, sparsity_loc: \"FF,Q,K,V,O\"}\n");
  EXPECT_EQ(sste.sparsity.sparsity_type, SparsityType::kSste);
  EXPECT_EQ(sste.sparsity.nm, (NM{2, 4}));
  EXPECT_TRUE(ValidateExperiment(sste).ok()) << ValidateExperiment(sste);
  EXPECT_NE(
      ValidateError(vit + "sparsity_type: SSTE, n_sparsity: 1, m_sparsity: 4}\n").find("sparsity.n_sparsity"),
      std::string::npos);
  EXPECT_NE(ValidateError(vit + "sparsity_type: SSTE, sparsity_loc: FFC}\n").find("sparsity.sparsity_loc"),
            std::string::npos);
  EXPECT_NE(ValidateError(vit + "sparsity_type: SSTE, sparse_dim: COL}\n").find("sparsity.sparse_dim"),
            std::string::npos);
  EXPECT_NE(ParseError(vit + "recipe: SSTE, n_sparsity: 1}\n").find("sparsity.n_sparsity"),
            std::string::npos);
}

// STEP (§13) is 2:4 on linears with AdamW: the recipe writes 2:4 and the authors' switch bounds (omitted at
// their defaults, so a run's hash does not change with the keys' introduction); anything else is refused with
// the key that asks for it.
TEST(ExperimentConfigTest, StepIsTwoFourOnLinearsWithAdamW) {
  const std::string vit = "model: {name: vit_nano_patch7_28}\nsparsity: {";
  const ExperimentConfig step = MustParse(vit + "recipe: STEP, sparsity_loc: \"FF,Q,K,V,O\"}\n");
  EXPECT_EQ(step.sparsity.sparsity_type, SparsityType::kStep);
  EXPECT_EQ(step.sparsity.nm, (NM{2, 4}));
  EXPECT_EQ(step.sparsity.step_switch_min, 0.1);
  EXPECT_EQ(step.sparsity.step_switch_max, 0.5);
  EXPECT_EQ(step.sparsity.step_z_option, 1);
  EXPECT_TRUE(ValidateExperiment(step).ok()) << ValidateExperiment(step);
  const std::string lion = "model: {name: vit_nano_patch7_28}\noptimizer: {name: lion}\nsparsity: {";
  EXPECT_NE(
      ValidateError(lion + "recipe: STEP}\n").find("optimizer.name: value 'lion' with sparsity.recipe STEP"),
      std::string::npos);
  EXPECT_NE(
      ValidateError(vit + "sparsity_type: STEP, n_sparsity: 1, m_sparsity: 4}\n").find("sparsity.n_sparsity"),
      std::string::npos);
  EXPECT_NE(ValidateError(vit + "sparsity_type: STEP, sparsity_loc: FFC}\n").find("sparsity.sparsity_loc"),
            std::string::npos);
  EXPECT_NE(ValidateError(vit + "recipe: STEP, dense_steps: 0.2}\n").find("sparsity.dense_steps"),
            std::string::npos);
  EXPECT_NE(ValidateError(vit + "recipe: STEP, fine_tune_steps: 0.2}\n").find("sparsity.fine_tune_steps"),
            std::string::npos);
  EXPECT_NE(ValidateError(vit + "recipe: STEP, step_switch_min: 0.6}\n").find("sparsity.step_switch_max"),
            std::string::npos);
  EXPECT_NE(ParseError(vit + "recipe: STEP, step_z_option: 3}\n").find("sparsity.step_z_option"),
            std::string::npos);
  const ExperimentConfig geometric =
      MustParse(vit + "recipe: STEP, step_z_option: 2, step_switch_max: 0.8}\n");
  EXPECT_EQ(geometric.sparsity.step_z_option, 2);
  EXPECT_EQ(geometric.sparsity.step_switch_max, 0.8);
}

// HU24 (docs/sparsity-method.md §12.3) is 2:4 on linears whose weights tile in 4x4: anything else is refused
// with the key that asks for it.
TEST(ExperimentConfigTest, Hu24IsTwoFourOnLinearsOnly) {
  const std::string vit = "model: {name: vit_nano_patch7_28}\nsparsity: {";
  for (const char* loc : {"FF", "\"FF,Q,K,V,O\""}) {
    const ExperimentConfig hu24 = MustParse(vit + "recipe: HU24, sparsity_loc: " + loc + "}\n");
    EXPECT_EQ(hu24.sparsity.sparsity_type, SparsityType::kHu24);
    EXPECT_TRUE(ValidateExperiment(hu24).ok()) << ValidateExperiment(hu24);
  }
  const ExperimentConfig swin =
      MustParse("model: {name: swinv2_micro_window7_28}\nsparsity: {recipe: HU24, sparsity_loc: FFQKVO}\n");
  EXPECT_TRUE(ValidateExperiment(swin).ok()) << ValidateExperiment(swin);
  EXPECT_EQ(ValidateError(vit + "sparsity_type: HU24, n_sparsity: 1, m_sparsity: 4}\n"),
            "sparsity.n_sparsity: HU24 is 2:4 only, not 1:4");
  EXPECT_EQ(ValidateError(vit + "sparsity_type: HU24, sparsity_loc: FFQ, n_sparsity_qkv: 1}\n"),
            "sparsity.n_sparsity_qkv: HU24 is 2:4 only, not 1:4");
  EXPECT_EQ(ValidateError(vit + "sparsity_type: HU24, sparsity_loc: FFC}\n"),
            "sparsity.sparsity_loc: HU24 sparsifies linears only: drop C");
  EXPECT_EQ(ValidateError(vit + "sparsity_type: HU24, sparse_dim: COL}\n"),
            "sparsity.sparse_dim: HU24 groups the in-features (ROW) only");
  EXPECT_NE(ParseError(vit + "recipe: HU24, m_sparsity: 8}\n").find("sparsity.m_sparsity"),
            std::string::npos);
}

// BIMASK (docs/sparsity-method.md §14) groups M in-features and M output rows of linears, with one N:M for
// all of them: anything else is refused with the key that asks for it.
TEST(ExperimentConfigTest, BimaskIsOneNMOnLinearsOnly) {
  const std::string vit = "model: {name: vit_nano_patch7_28}\nsparsity: {";
  for (const char* extra : {"", ", n_sparsity: 1", ", sparsity_loc: FF"}) {
    const ExperimentConfig bimask = MustParse(vit + "recipe: BIMASK" + extra + "}\n");
    EXPECT_EQ(bimask.sparsity.sparsity_type, SparsityType::kBimask);
    EXPECT_TRUE(ValidateExperiment(bimask).ok()) << extra << ": " << ValidateExperiment(bimask);
  }
  const ExperimentConfig swin =
      MustParse("model: {name: swinv2_micro_window7_28}\nsparsity: {recipe: BIMASK}\n");
  EXPECT_TRUE(ValidateExperiment(swin).ok()) << ValidateExperiment(swin);
  EXPECT_EQ(ValidateError(vit + "recipe: BIMASK, n_sparsity_qkv: 1}\n"),
            "sparsity.n_sparsity_qkv: BIMASK uses one N:M for every linear, but qkv's 1:4 is not 2:4");
  EXPECT_EQ(ValidateError(vit + "recipe: BIMASK, sparsity_loc: FFC}\n"),
            "sparsity.sparsity_loc: BIMASK sparsifies linears only: drop C");
  EXPECT_EQ(ValidateError(vit + "recipe: BIMASK, sparse_dim: COL}\n"),
            "sparsity.sparse_dim: BIMASK's forward mask groups the in-features (ROW) only");
  EXPECT_NE(ValidateError(vit + "recipe: BIMASK, n_sparsity: 3, m_sparsity: 64}\n")
                .find("BIMASK's backward mask groups 64 output rows"),
            std::string::npos);
}

TEST(ExperimentConfigTest, ValidationChecksEveryNMEverUsed) {
  // Patch embedding [32, 1, 7, 7] = 1568 weights: a multiple of 32, not of 64.
  const std::string conv = "model: {name: vit_nano_patch7_28}\nsparsity: {sparsity_type: STRUCTURED_NM, ";
  EXPECT_TRUE(ValidateExperiment(MustParse(conv + "n_sparsity: 1, m_sparsity: 32, sparsity_loc: C}\n")).ok());
  EXPECT_EQ(
      ValidateError(conv + "n_sparsity: 1, m_sparsity: 64, sparsity_loc: FFC}\n"),
      "sparsity: layer patch_embed.proj.weight (C, shape [32, 1, 7, 7], 1568 weights) cannot use 1:64: its "
      "number of weights is not a multiple of M = 64");
  // 1:8 is fine, but SDGF-Geometric passes 8:64 first (a later stage is named with its start epoch).
  const std::string sdgf =
      conv + "n_sparsity: 1, m_sparsity: 8, sparsity_loc: C, structure_decay_flag: true, ";
  EXPECT_TRUE(ValidateExperiment(MustParse(sdgf + "structure_decay_type: sparsify}\n")).ok());
  // With one epoch every stage starts at 0 and the target wins: only 1:8 is ever used.
  EXPECT_TRUE(ValidateExperiment(MustParse(sdgf + "structure_decay_type: fine}\n")).ok());
  EXPECT_EQ(
      ValidateError(sdgf + "structure_decay_type: fine}\nschedule: {epochs: 8}\n"),
      "sparsity: layer patch_embed.proj.weight (C, shape [32, 1, 7, 7], 1568 weights) cannot use 8:64: its "
      "number of weights is not a multiple of M = 64");
  EXPECT_EQ(ValidateError(sdgf + "structure_decay_type: densify, dense_steps: 0.5}\nschedule: {epochs: 8}\n"),
            "sparsity: layer patch_embed.proj.weight (C, shape [32, 1, 7, 7], 1568 weights) cannot use 1:64 "
            "(structure decay stage from epoch 4): its number of weights is not a multiple of M = 64");
  // The stages divide schedule.epochs, not its cooldown, as the reference's total_epochs = args.epochs (issue
  // 24): 1 epoch and 7 of cooldown use only the target, as 1 epoch does.
  EXPECT_TRUE(
      ValidateExperiment(MustParse(sdgf + "structure_decay_type: fine}\n"
                                          "schedule: {epochs: 1, sched: cosine, cooldown_epochs: 7}\n"))
          .ok());
  // SR-STE ignores the structure decay.
  EXPECT_TRUE(ValidateExperiment(MustParse("model: {name: vit_nano_patch7_28}\n"
                                           "sparsity: {sparsity_type: SRSTE, n_sparsity: 1, m_sparsity: 8, "
                                           "sparsity_loc: C, structure_decay_flag: true, "
                                           "structure_decay_type: fine}\nschedule: {epochs: 8}\n"))
                  .ok());
  // Q/K/V use their own ratio: 3 does not divide 32 * 32.
  EXPECT_EQ(
      ValidateError(conv + "sparsity_loc: FFQKV, n_sparsity_qkv: 1, m_sparsity_qkv: 3}\n"),
      "sparsity: layer blocks.0.attn.qkv.weight (Q, shape [32, 32], 1024 weights) cannot use 1:3: its number "
      "of weights is not a multiple of M = 3");
}

// Dynamic groups (§7) are checked against the catalogue's parameter list, without LibTorch.
TEST(ExperimentConfigTest, ValidationChecksDynamicFiltersAgainstModelParameters) {
  const std::string base = "model: {name: vit_nano_patch7_28}\nsparsity:\n";
  EXPECT_TRUE(ValidateExperiment(MustParse(base + "  - {param_filter: 'blocks.*.mlp.*', algorithm: rigl, "
                                                  "sparsity: 0.9}\n"))
                  .ok());
  EXPECT_EQ(ValidateError(base + "  - {param_filter: ['blocks.*.mlp.*', 'blocks.*.ffn.*'], algorithm: rigl, "
                                 "sparsity: 0.9}\n")
                .rfind("sparsity.dynamic[0].param_filter[1]: value 'blocks.*.ffn.*' matches no parameter of "
                       "the model; its parameters: ",
                       0),
            0u);
  // Left empty by the group before it: every block weight is taken by group 0.
  EXPECT_EQ(ValidateError(base + "  - {param_filter: 'blocks.*', algorithm: rigl, sparsity: 0.9}\n"
                                 "  - {param_filter: 'blocks.*.mlp.*', algorithm: set, sparsity: 0.5}\n")
                .rfind("sparsity.dynamic[1].param_filter: [blocks.*.mlp.*] matches no parameter left by the "
                       "groups before it",
                       0),
            0u);
}

// optimizer.name: adamw or lion; dynamic sparsity masks AdamW's moments only, so it refuses Lion by name.
TEST(ExperimentConfigTest, LionIsAnOptimizerButNotWithDynamicSparsity) {
  EXPECT_EQ(MustParse("model: {name: vit_nano_patch7_28}\noptimizer: {name: Lion}\n").optimizer.name, "lion");
  EXPECT_TRUE(
      ValidateExperiment(MustParse("model: {name: vit_nano_patch7_28}\noptimizer: {name: lion}\n")).ok());
  EXPECT_EQ(ValidateError("model: {name: vit_nano_patch7_28}\noptimizer: {name: lion}\nsparsity:\n"
                          "  - {param_filter: 'blocks.*.mlp.*', algorithm: rigl, sparsity: 0.9}\n"),
            "optimizer.name: value 'lion' with dynamic sparsity (sparsity.dynamic): only adamw");
  EXPECT_NE(ParseError("model: {name: vit_nano_patch7_28}\noptimizer: {name: sgd}\n").find("optimizer.name"),
            std::string::npos);
}

TEST(ExperimentConfigTest, SwinV2GridMustTile) {
  EXPECT_TRUE(ValidateExperiment(MustParse("model: {name: swinv2_micro_window7_28}\n")).ok());
  EXPECT_TRUE(
      ValidateExperiment(MustParse("model: {name: swinv2_tiny_window8_256}\ndata: {dataset: synthetic}\n"))
          .ok());
  EXPECT_EQ(
      ValidateError("model: {name: swinv2_micro_window7_28, img_size: 24}\ndata: {dataset: synthetic}\n"),
      "model.img_size: value 24 gives a 12x12 token grid at stage 0 of swinv2_micro_window7_28, which window "
      "7 and the 2x2 patch merging cannot tile");
}

}  // namespace
}  // namespace nmsparse
