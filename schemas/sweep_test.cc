#include "schemas/sweep.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "schemas/content_hash.h"
#include "schemas/layer_plan.h"
#include "schemas/model_catalog.h"
#include "schemas/testing/generic_paths.h"

namespace nmsparse {
namespace {

constexpr char kBase[] = R"(base:
  name: s
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 4}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)";

v1::SweepSpec MustParse(const std::string& text) {
  auto sweep = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_TRUE(sweep.ok()) << sweep.status();
  return sweep.ok() ? *sweep : v1::SweepSpec();
}

std::string ParseError(const std::string& text) {
  auto sweep = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_FALSE(sweep.ok()) << text;
  return std::string(sweep.status().message());
}

std::vector<ResolvedRun> MustExpand(const v1::SweepSpec& sweep) {
  auto runs = ExpandSweep(sweep);
  EXPECT_TRUE(runs.ok()) << runs.status();
  return runs.ok() ? *runs : std::vector<ResolvedRun>();
}

TEST(SweepTest, GridIsCartesianProductInAxisOrder) {
  const auto sweep = MustParse(std::string("name: g\n") + kBase + R"(grid:
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    mdgf_exp: {sparsity.sparsity_type: STRUCTURED_NM, sparsity.decay_type: EXP, sparsity.decay_coef: 0.01}
  sparsity.m_sparsity: [4, 8, 16]
priority: 5
max_retries: 2
idempotency_key: abc
)");
  EXPECT_EQ(sweep.name(), "g");
  EXPECT_EQ(sweep.priority(), 5);
  EXPECT_EQ(sweep.max_retries(), 2u);
  EXPECT_EQ(sweep.idempotency_key(), "abc");
  ASSERT_EQ(sweep.grid_size(), 2);
  const auto runs = MustExpand(sweep);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(LabelsToString(runs[0].labels), "recipe=dense, sparsity.m_sparsity=4");
  EXPECT_EQ(LabelsToString(runs[1].labels), "recipe=dense, sparsity.m_sparsity=8");
  EXPECT_EQ(LabelsToString(runs[5].labels), "recipe=mdgf_exp, sparsity.m_sparsity=16");
  EXPECT_EQ(runs[5].index, 5);
  EXPECT_EQ(runs[5].config.sparsity.sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(runs[5].config.sparsity.decay_type, DecayType::kExp);
  EXPECT_DOUBLE_EQ(runs[5].config.sparsity.decay_coef, 0.01);
  EXPECT_EQ(runs[5].config.sparsity.nm, (NM{2, 16}));
  // The base's QKV ratio was the defaulted one: it follows the axis.
  EXPECT_EQ(runs[5].config.sparsity.nm_qkv, (NM{2, 16}));
  EXPECT_EQ(runs[5].canonical_yaml, CanonicalYaml(runs[5].config));
  std::set<std::string> hashes;
  for (const auto& r : runs) hashes.insert(r.content_hash);
  // Dense is one model whatever M says: its three runs share one hash (and reuse one training), though each
  // still hands nmtrain its own canonical spec; the three MDGF runs differ.
  EXPECT_EQ(hashes.size(), 4u);
  EXPECT_EQ(runs[0].content_hash, runs[2].content_hash);
  EXPECT_NE(runs[0].canonical_yaml, runs[2].canonical_yaml);
  EXPECT_NE(runs[0].legacy_content_hash, runs[2].legacy_content_hash);  // Their hashes before.
  EXPECT_EQ(runs[2].legacy_content_hash, Sha256Hex(runs[2].canonical_yaml));
  EXPECT_EQ(runs[5].legacy_content_hash, "");  // Not dense: one hash, as before.
  EXPECT_EQ(runs[5].content_hash, Sha256Hex(runs[5].canonical_yaml));
  // Deterministic: the same sweep expands to the same hashes.
  EXPECT_EQ(MustExpand(sweep)[3].content_hash, runs[3].content_hash);
}

// A precision axis: the fp32 run is the base run (same canonical text as without the key), the bf16 run
// differs in hash and carries its precision on the wire; the generic expansion agrees.
TEST(SweepTest, PrecisionAxis) {
  const auto sweep =
      MustParse(std::string("name: p\n") + kBase + "grid:\n  resources.precision: [fp32, BF16]\n");
  const auto runs = MustExpand(sweep);
  ASSERT_EQ(runs.size(), 2u);
  const auto base = MustExpand(MustParse(std::string("name: p\n") + kBase));
  ASSERT_EQ(base.size(), 1u);
  EXPECT_EQ(runs[0].content_hash, base[0].content_hash);
  EXPECT_EQ(runs[0].config.resources.precision, "fp32");
  EXPECT_EQ(runs[1].config.resources.precision, "bf16");
  EXPECT_NE(runs[1].content_hash, runs[0].content_hash);
  EXPECT_NE(runs[1].canonical_yaml.find("  precision: bf16\n"), std::string::npos) << runs[1].canonical_yaml;
  EXPECT_EQ(runs[0].canonical_yaml.find("precision:"), std::string::npos) << runs[0].canonical_yaml;
  auto generic = testing::ExpandSweepGeneric(sweep);
  ASSERT_TRUE(generic.ok()) << generic.status();
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ((*generic)[i].canonical_yaml, runs[i].canonical_yaml);
  }
  auto bad =
      ExpandSweep(MustParse(std::string("name: p\n") + kBase + "grid:\n  resources.precision: [fp16x]\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("resources.precision: value 'fp16x' is not one of fp32, bf16, fp16"),
            std::string::npos)
      << bad.status();
}

TEST(SweepTest, AxisSwitchesBetweenNMAndDynamicSparsity) {
  const auto sweep = MustParse(std::string("name: mix\n") + kBase + R"(grid:
  recipe:
    srste: {sparsity.sparsity_type: SRSTE}
    rigl:
      sparsity.sparsity_type: UNSTRUCTURED
      sparsity.dynamic: [{algorithm: rigl, sparsity: 0.9, update: {freq: 10}}]
    static: {sparsity.dynamic: "[{algorithm: static, sparsity: 0.9}]", sparsity.sparsity_type: unstructured}
    dense: {sparsity.sparsity_type: DENSE, sparsity.dynamic: null}
)");
  const auto runs = MustExpand(sweep);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].config.sparsity.sparsity_type, SparsityType::kSrste);
  EXPECT_FALSE(runs[0].config.sparsity.IsDynamic());
  EXPECT_EQ(runs[1].config.sparsity.sparsity_type, SparsityType::kUnstructured);
  ASSERT_EQ(runs[1].config.sparsity.dynamic.size(), 1u);
  EXPECT_EQ(runs[1].config.sparsity.dynamic[0].algorithm, DynamicAlgorithm::kRigl);
  EXPECT_EQ(runs[1].config.sparsity.dynamic[0].update.freq, 10);
  EXPECT_EQ(runs[2].config.sparsity.dynamic.at(0).algorithm, DynamicAlgorithm::kStatic);
  EXPECT_EQ(runs[3].config.sparsity.sparsity_type, SparsityType::kDense);
  EXPECT_FALSE(runs[3].config.sparsity.IsDynamic());
  std::set<std::string> hashes;
  for (const auto& r : runs) hashes.insert(r.content_hash);
  EXPECT_EQ(hashes.size(), 4u);

  // A dynamic base switched back to N:M by an axis.
  const auto back = MustParse(R"(name: back
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  sparsity: {algorithm: set, sparsity: 0.8}
grid:
  recipe:
    set: {sparsity.sparsity_type: UNSTRUCTURED}
    nm: {sparsity.dynamic: [], sparsity.sparsity_type: STRUCTURED_NM, sparsity.m_sparsity: 8}
)");
  const auto back_runs = MustExpand(back);
  ASSERT_EQ(back_runs.size(), 2u);
  EXPECT_EQ(back_runs[0].config.sparsity.dynamic.at(0).algorithm, DynamicAlgorithm::kSet);
  EXPECT_EQ(back_runs[1].config.sparsity.sparsity_type, SparsityType::kStructuredNM);
  EXPECT_FALSE(back_runs[1].config.sparsity.IsDynamic());
  EXPECT_EQ(back_runs[1].config.sparsity.nm, (NM{2, 8}));

  // Forgetting to switch the type is an error naming the run and the key.
  const auto bad = MustParse(std::string("name: bad\n") + kBase + R"(grid:
  recipe:
    rigl: {sparsity.dynamic: "[{algorithm: rigl, sparsity: 0.9}]"}
)");
  auto expanded = ExpandSweep(bad);
  ASSERT_FALSE(expanded.ok());
  EXPECT_NE(expanded.status().message().find("sparsity.sparsity_type: value SRSTE cannot be combined with "
                                             "dynamic groups"),
            std::string::npos)
      << expanded.status();
}

// A base whose semi_structured section chooses no layer keeps its other keys for the runs whose axis chooses
// layers (a run's canonical YAML carries the section only when it chooses one).
TEST(SweepTest, BaseSemiStructuredKeysReachTheRunsThatChooseLayers) {
  const std::string text = std::string(kBase) +
                           "  semi_structured: {mask: transposable, dense_after: {fraction: 0.5}}\n"
                           "grid:\n  semi_structured.layers: [\"[]\", \"[blocks.*.mlp.fc1]\"]\n";
  const std::vector<ResolvedRun> runs = MustExpand(MustParse(text));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].canonical_yaml.find("semi_structured"), std::string::npos);
  const SemiStructuredConfig& chosen = runs[1].config.semi_structured;
  EXPECT_EQ(chosen.layers, std::vector<std::string>{"blocks.*.mlp.fc1"});
  EXPECT_EQ(chosen.mask, SemiStructuredMask::kTransposable);
  EXPECT_EQ(chosen.dense_after_fraction, 0.5);
}

TEST(SweepTest, ValuesListFormsAndGpusPerRun) {
  const auto sweep = MustParse(std::string(kBase) + R"(grid:
  lr:
    values:
      - {label: low, set: {optimizer.lr: 1e-4}}
      - high: {optimizer.lr: 1e-2, data.hflip: 0.5}
  sparsity.phases: ["[{sparse: 0.5}, {dense: 0.5}]", [{sparse: 1}]]
gpus_per_run: 2
)");
  const auto runs = MustExpand(sweep);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].labels[0].second, "low");
  EXPECT_DOUBLE_EQ(runs[0].config.optimizer.lr, 1e-4);
  EXPECT_EQ(runs[0].config.sparsity.phases.size(), 2u);
  EXPECT_EQ(runs[1].labels[1].second, "[{sparse: 1}]");
  EXPECT_DOUBLE_EQ(runs[3].config.data.hflip, 0.5);
  for (const auto& r : runs) EXPECT_EQ(r.config.resources.gpus, 2);
}

TEST(SweepTest, RandomAxesAreSeededAndDeterministic) {
  const std::string text = std::string(kBase) + R"(grid:
  sparsity.m_sparsity: [4, 8]
random:
  optimizer.lr: {min: 1e-4, max: 1e-2, log: true}
  optimizer.grad_accum_steps: {min: 1, max: 4, integer: true}
  data.dataset: {choices: [synthetic, SYNTHETIC]}
num_samples: 5
seed: 42
)";
  const auto runs = MustExpand(MustParse(text));
  ASSERT_EQ(runs.size(), 10u);
  std::set<double> lrs;
  for (const auto& r : runs) {
    EXPECT_GE(r.config.optimizer.lr, 1e-4);
    EXPECT_LE(r.config.optimizer.lr, 1e-2);
    EXPECT_GE(r.config.optimizer.grad_accum_steps, 1);
    EXPECT_LE(r.config.optimizer.grad_accum_steps, 4);
    lrs.insert(r.config.optimizer.lr);
    ASSERT_EQ(r.labels.size(), 4u);
    EXPECT_EQ(r.labels[1].first, "optimizer.lr");
  }
  EXPECT_EQ(lrs.size(), 10u);
  EXPECT_EQ(runs[0].labels[0].second, "4");
  EXPECT_EQ(runs[5].labels[0].second, "8");
  const auto again = MustExpand(MustParse(text));
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(again[i].content_hash, runs[i].content_hash);
  auto other_seed = MustParse(text);
  other_seed.set_seed(43);
  EXPECT_NE(MustExpand(other_seed)[0].config.optimizer.lr, runs[0].config.optimizer.lr);
}

// Found by sweep_yaml_fuzzer (fuzz/corpus/sweep_yaml_fuzzer/crash-map-as-key.yaml): a flow map whose key is
// itself a map threw from yaml-cpp's conversion instead of being refused.
TEST(SweepTest, AMapAsAKeyIsRefusedNotThrown) {
  const std::string error = ParseError(
      std::string(kBase) + "grid:\n  lr_set:\n    values: [{label: low, set:, {optimizer.lr: 1e-4}}]\n");
  EXPECT_NE(error.find("a key must be a plain word"), std::string::npos) << error;
}

TEST(SweepTest, ParseErrorsNameFileLineAndPath) {
  EXPECT_EQ(ParseError("name: x\n"),
            "sweep.yaml:1: base: missing: a sweep needs a base spec (base or base_file)");
  EXPECT_EQ(
      ParseError(std::string(kBase) + "grid:\n  sparsity.m_sparsty: [4, 8]\n"),
      "sweep.yaml:8: grid.sparsity.m_sparsty: unknown key path 'sparsity.m_sparsty' (did you mean "
      "'m_sparsity'?): known keys of sparsity: "
      "recipe, sparsity_type, n_sparsity, m_sparsity, n_sparsity_qkv, m_sparsity_qkv, decay_type, "
      "decay_coef, structure_decay_flag, structure_decay_type, structure_decay_start_multiple, dense_steps, "
      "fine_tune_steps, sparsity_loc, sparse_dim, prune_rate, srste_lambda, srste_decay_under_loss_scale, "
      "step_switch_min, step_switch_max, step_z_option, mask_refresh_steps, permutation_refresh_forwards, "
      "phases, dynamic");
  EXPECT_EQ(
      ParseError(std::string(kBase) + "grid:\n  recipe:\n    a: {optimizer.lrate: 1}\n"),
      "sweep.yaml:9: grid.recipe.a.optimizer.lrate: unknown key path 'optimizer.lrate': known keys of "
      "optimizer: name, lr, weight_decay, beta1, beta2, eps, clip_grad_norm, label_smoothing, mixup_alpha, "
      "cutmix_alpha, cutmix_min, "
      "cutmix_max, mixup_prob, mixup_switch_prob, mixup_mode, mixup_off_epoch, bce_loss, bce_target_thresh, "
      "bce_sum, layer_decay, grad_accum_steps");
  EXPECT_EQ(ParseError(std::string(kBase) + "grid:\n  recipe: 3\n"),
            "sweep.yaml:8: grid.recipe: value 3 is not a list of values, a map label -> overrides, or "
            "{values: [...]}");
  EXPECT_EQ(ParseError(std::string(kBase) + "random:\n  optimizer.lr: {min: 0, max: 1, log: true}\n"),
            "sweep.yaml:8: random.optimizer.lr.min: value 0 is out of range: log needs min > 0");
  EXPECT_EQ(ParseError(std::string(kBase) + "random:\n  optimizer.lr: {min: 2, max: 1}\n"),
            "sweep.yaml:8: random.optimizer.lr.max: value 1 is out of range: must be >= 2");
  EXPECT_EQ(ParseError(std::string(kBase) + "num_samples: -1\n"),
            "sweep.yaml:7: num_samples: value -1 is out of range: must be >= 0");
  EXPECT_EQ(ParseError(std::string(kBase) + "grids: {}\n"),
            "sweep.yaml:7: grids: unknown key (did you mean 'grid'?); known keys: name, base, base_file, "
            "grid, random, num_samples, seed, "
            "priority, max_retries, gpus_per_run, idempotency_key, no_reuse, early_stopping, search");
  EXPECT_EQ(ParseError("base:\n  model: {name: vit_nano_patch7_28}\n  data: {batch_size: 0}\n"),
            "sweep.yaml:3: data.batch_size: value 0 is out of range: must be >= 1");
  EXPECT_EQ(ParseError("base_file: missing.yaml\n"), "sweep.yaml:1: base_file: cannot read missing.yaml");
}

TEST(SweepTest, ExpansionErrorsNameRunLabelsAndKey) {
  auto bad = ExpandSweep(MustParse(std::string(kBase) + "grid:\n  sparsity.m_sparsity: [4, 3]\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message(),
      "run 1 (sparsity.m_sparsity=3): sparsity: layer blocks.0.mlp.fc1.weight (FF, shape [128, 32], 4096 "
      "weights) cannot use 2:3: its number of weights is not a multiple of M = 3");
  auto wrong_type =
      ExpandSweep(MustParse(std::string(kBase) + "grid:\n  recipe: {x: {sparsity.n_sparsity: two}}\n"));
  EXPECT_EQ(wrong_type.status().message(),
            "run 0 (recipe=x): sparsity.n_sparsity: value 'two' is not an integer");
}

TEST(SweepTest, BaseFileRelativeToSweepFile) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/base.yaml") << "model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic}\n";
  std::ofstream(dir + "/sweep.yaml") << "base_file: base.yaml\ngrid:\n  seed: [1, 2, 3]\n";
  auto sweep = ParseSweepFile(dir + "/sweep.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_NE(sweep->base().find("dataset: synthetic"), std::string::npos) << sweep->base();
  auto runs = ExpandSweep(*sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[2].config.seed, 3u);
}

TEST(SweepTest, ApplyOverride) {
  YAML::Node spec = YAML::Load("model: {name: vit_nano_patch7_28}\n");
  ASSERT_TRUE(ApplyOverride(spec, "sparsity.m_sparsity", "8").ok());
  ASSERT_TRUE(ApplyOverride(spec, "sparsity.n_sparsity", "1").ok());
  ASSERT_TRUE(ApplyOverride(spec, "seed", "9").ok());
  ASSERT_TRUE(ApplyOverride(spec, "sparsity.phases", "[{sparse: 0.8}, {dense: 0.2}]").ok());
  auto config = ParseExperimentNode(spec, "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sparsity.nm, (NM{1, 8}));
  EXPECT_EQ(config->seed, 9u);
  EXPECT_EQ(config->sparsity.phases.size(), 2u);
  ASSERT_TRUE(ApplyOverride(spec, "seed", "").ok());  // Back to the default.
  EXPECT_EQ(ParseExperimentNode(spec, "")->seed, 0u);

  EXPECT_EQ(
      ApplyOverride(spec, "optimizer.learning_rate", "1").message(),
      "unknown key path 'optimizer.learning_rate': known keys of optimizer: name, lr, weight_decay, beta1, "
      "beta2, eps, clip_grad_norm, label_smoothing, mixup_alpha, cutmix_alpha, cutmix_min, "
      "cutmix_max, mixup_prob, mixup_switch_prob, mixup_mode, mixup_off_epoch, bce_loss, bce_target_thresh, "
      "bce_sum, layer_decay, grad_accum_steps");
  EXPECT_EQ(
      ApplyOverride(spec, "lr", "1").message(),
      "unknown key path 'lr': known top-level keys: name, seed, model, data, optimizer, schedule, resources, "
      "sparsity, semi_structured");
  EXPECT_EQ(ApplyOverride(spec, "seed.x", "1").message(), "unknown key path 'seed.x': seed has no keys");
  EXPECT_EQ(ApplyOverride(spec, "model.name.x", "1").message().substr(0, 40),
            "unknown key path 'model.name.x': known k");

  YAML::Node flat = YAML::Load("model: vit_nano_patch7_28\nm_sparsity: 4\n");
  ASSERT_TRUE(ApplyOverride(flat, "m_sparsity", "8").ok());
  ASSERT_TRUE(ApplyOverride(flat, "lr", "0.01").ok());
  EXPECT_EQ(ParseExperimentNode(flat, "")->sparsity.nm.m, 8);
  EXPECT_EQ(ApplyOverride(flat, "sparsity.m_sparsity", "8").message(),
            "unknown key path 'sparsity.m_sparsity': a flat reference config takes timm train.py keys and "
            "sparsity keys");
}

TEST(LayerPlanTest, DynamicGroupsListEveryParameter) {
  auto config = ParseExperimentYaml(R"(
model: {name: vit_nano_patch7_28}
schedule: {epochs: 4}
sparsity:
  - {param_filter: "blocks.*.mlp.*", algorithm: rigl, sparsity: 0.9}
  - {algorithm: gmp, sparsity: {type: power, start_value: 0, end_value: 0.8, end_step: 100}}
)",
                                    "dyn.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  auto rows = DescribeLayerPlan(*config);
  ASSERT_TRUE(rows.ok()) << rows.status();
  // Every parameter of the model, in module order, each with its group's treatment or "dense".
  const auto params = ModelParameters(*LookupModel("vit_nano_patch7_28"));
  ASSERT_EQ(rows->size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ((*rows)[i].name, params[i].name);
    EXPECT_EQ((*rows)[i].shape, params[i].shape) << params[i].name;
  }
  std::map<std::string, std::string> text_of;
  for (const auto& row : *rows) {
    ASSERT_EQ(row.stages.size(), 1u) << row.name;
    text_of[row.name] = row.stages[0].text;
  }
  const std::string rigl = "RIGL 0.9 (group 0)", gmp = "GMP POWER^3 0->0.8 over steps [0, 100) (group 1)";
  EXPECT_EQ(text_of["blocks.0.mlp.fc1.weight"], rigl);
  EXPECT_EQ(text_of["blocks.1.mlp.fc2.bias"], rigl);  // The glob takes biases too.
  EXPECT_EQ(text_of["blocks.0.attn.qkv.weight"], gmp);
  EXPECT_EQ(text_of["head.weight"], gmp);
  EXPECT_EQ(text_of["patch_embed.proj.weight"], gmp);
  for (const char* dense : {"cls_token", "pos_embed", "blocks.0.norm1.weight", "blocks.0.attn.qkv.bias",
                            "norm.bias", "head.bias"}) {
    EXPECT_EQ(text_of[dense], "dense") << dense;
  }
  const std::string table = FormatLayerPlan(*rows);
  EXPECT_NE(table.find("blocks.0.mlp.fc1.weight    FF [128, 32]         epochs 0-3: " + rigl),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("head.bias                  -  [10]              epochs 0-3: dense"),
            std::string::npos)
      << table;

  // A filter that matches nothing fails the plan as it fails validation, naming the filter.
  config->sparsity.dynamic[0].param_filter = {"blocks.*.ffn.*"};
  auto bad = DescribeLayerPlan(*config);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message().rfind("sparsity.dynamic[0].param_filter[0]: value 'blocks.*.ffn.*' matches "
                                   "no parameter of the model",
                                   0),
      0u)
      << bad.status();
}

TEST(LayerPlanTest, StagesPerLayer) {
  auto config = ParseExperimentYaml(R"(
model: {name: vit_nano_patch7_28}
schedule: {epochs: 10}
sparsity:
  sparsity_type: STRUCTURED_NM
  n_sparsity: 1
  m_sparsity: 8
  n_sparsity_qkv: 2
  m_sparsity_qkv: 4
  sparsity_loc: FFQ
  structure_decay_flag: true
  structure_decay_type: sparsify
  dense_steps: 0.2
  fine_tune_steps: 0.2
)",
                                    "");
  ASSERT_TRUE(config.ok()) << config.status();
  auto rows = DescribeLayerPlan(*config);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 6u);  // 2 blocks x (Q, fc1, fc2).
  const LayerPlanRow& fc1 = (*rows)[1];
  EXPECT_EQ(fc1.name, "blocks.0.mlp.fc1.weight");
  // d = f = 2, K = 4 over 6 epochs: starts 2, 3, 5, 6; fine-tune for epochs > 8.
  ASSERT_EQ(fc1.stages.size(), 6u);
  EXPECT_EQ(fc1.stages[0].text, "dense");
  EXPECT_EQ(fc1.stages[1].text, "7:8");
  EXPECT_EQ(fc1.stages[1].start_epoch, 2);
  EXPECT_EQ(fc1.stages[4].text, "1:8");
  EXPECT_EQ(fc1.stages[4].end_epoch, 9);
  EXPECT_EQ(fc1.stages[5].text, "1:8 hard");
  EXPECT_EQ(fc1.stages[5].start_epoch, 9);
  const LayerPlanRow& q = (*rows)[0];
  EXPECT_EQ(q.location, SparsityLocation::kQ);
  EXPECT_EQ(q.stages[1].text, "3:4");
  const std::string table = FormatLayerPlan(*rows);
  EXPECT_NE(table.find("blocks.0.mlp.fc1.weight   FF [128, 32]         epochs 0-1: dense; epochs 2-2: 7:8; "
                       "epochs 3-4: 4:8; epochs 5-5: 2:8; epochs 6-8: 1:8; epochs 9-9: 1:8 hard"),
            std::string::npos)
      << table;

  // Cooldown epochs (issue 24) change neither d, f nor the stages, which divide schedule.epochs as the
  // reference's do; they are fine-tune epochs (epoch > T - f) after the last stage.
  config->schedule.sched = "cosine";
  config->schedule.cooldown_epochs = 3;
  rows = DescribeLayerPlan(*config);
  ASSERT_TRUE(rows.ok());
  EXPECT_NE(
      FormatLayerPlan(*rows).find("epochs 0-1: dense; epochs 2-2: 7:8; epochs 3-4: 4:8; epochs 5-5: 2:8; "
                                  "epochs 6-8: 1:8; epochs 9-12: 1:8 hard"),
      std::string::npos)
      << FormatLayerPlan(*rows);
  config->schedule.cooldown_epochs = 0;

  config->sparsity = SparsityConfig();
  config->sparsity.sparsity_type = SparsityType::kSrste;
  config->sparsity.phases = {{PhaseKind::kSparse, 0.8}, {PhaseKind::kDense, 0.2}};
  rows = DescribeLayerPlan(*config);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ((*rows)[0].stages.size(), 2u);
  EXPECT_EQ((*rows)[0].stages[0].text, "SR-STE 2:4");
  EXPECT_EQ((*rows)[0].stages[1].start_epoch, 8);
  config->sparsity.sparsity_type = SparsityType::kDense;
  EXPECT_EQ(FormatLayerPlan(*DescribeLayerPlan(*config)), "no sparse layers (dense run)\n");
}

// issue 14: a recipe as an axis value replaces the keys it implies in the (fully written) base.
TEST(SweepTest, RecipeAxisReplacesTheBaseKeysItImplies) {
  const auto sweep = MustParse(std::string("name: r\n") + kBase + R"(grid:
  sparsity.recipe: [DENSE, SRSTE, MDGF, SDGF]
)");
  const auto runs = MustExpand(sweep);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].config.sparsity.sparsity_type, SparsityType::kDense);
  EXPECT_EQ(runs[1].config.sparsity.sparsity_type, SparsityType::kSrste);
  EXPECT_EQ(runs[2].config.sparsity.sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(runs[2].config.sparsity.decay_type, DecayType::kExp);
  EXPECT_TRUE(runs[3].config.sparsity.structure_decay_flag);
  EXPECT_EQ(runs[3].config.sparsity.nm, (NM{2, 4}));  // Keys the recipe does not imply stay the base's.
  // The same content as the explicit keys, so the same hash.
  const auto explicit_keys = MustExpand(MustParse(std::string("name: r\n") + kBase + R"(grid:
  recipe:
    srste: {sparsity.sparsity_type: SRSTE}
)"));
  EXPECT_EQ(explicit_keys[0].content_hash, runs[1].content_hash);
}

// Model size as a grid axis (issue 28): one run per depth, each with its own model and content hash; the
// catalogue entry's own depth (4 for vit_micro) runs and hashes as the base does.
TEST(SweepTest, ModelDepthIsAnAxis) {
  const auto runs = MustExpand(MustParse(R"(name: depth
base:
  model: {name: vit_micro_patch4_28, embed_dim: 128, num_heads: 4}
  data: {dataset: synthetic}
grid:
  model.depth: [4, 6, 8]
)"));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].config.model.depth, 4);
  EXPECT_EQ(runs[1].config.model.depth, 6);
  EXPECT_EQ(runs[2].config.model.depth, 8);
  EXPECT_EQ(runs[0].canonical_yaml.find("depth:"), std::string::npos) << runs[0].canonical_yaml;
  EXPECT_NE(runs[1].canonical_yaml.find("  depth: 6\n"), std::string::npos) << runs[1].canonical_yaml;
  EXPECT_NE(runs[0].content_hash, runs[1].content_hash);
  EXPECT_NE(runs[1].content_hash, runs[2].content_hash);
}

}  // namespace
}  // namespace nmsparse
