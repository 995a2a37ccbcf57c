// Pins what ExpandSweep produces (canonical YAML, content hashes, wire specs, errors) to values computed with
// the yaml-cpp based expansion, before it was rewritten for speed: run content hashes identify runs in the
// coordinator's database, so they must never change by accident. The pins were recomputed (with the fast path
// checked equal to the generic one for every pinned sweep) when dynamic sparsity (§7) joined the canonical
// form: every canonical YAML now ends with the `dynamic` group list (`dynamic: []` for N:M runs), a
// deliberate format change.
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/content_hash.h"
#include "schemas/sweep.h"
#include "schemas/testing/generic_paths.h"
#include "schemas/testing/legacy_wire.h"

namespace nmsparse {
namespace {

// A sweep over every kind of override: labelled and list axes, QKV carry-over, phases, strings, random
// floats (uniform and log), integers and choices, gpus_per_run.
constexpr char kSweep[] = R"(name: pinned
base:
  name: pinned-base
  seed: 7
  model: {name: vit_nano_patch7_28, drop_path_rate: 0.1}
  data: {dataset: synthetic, batch_size: 32, hflip: 0.5}
  optimizer: {lr: 3e-4, clip_grad_norm: 1.0}
  schedule: {epochs: 4, warmup_epochs: 0.5, min_lr: 1.0e-5}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}
grid:
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    mdgf: {sparsity.sparsity_type: STRUCTURED_NM, sparsity.decay_type: EXP, sparsity.decay_coef: 0.02}
    phased: {sparsity.phases: "[{dense: 0.25}, {sparse: 0.5}, {fine_tune: 0.25}]", name: "phased run"}
    sdgf: {sparsity.structure_decay_flag: true, sparsity.dense_steps: 0.1, sparsity.fine_tune_steps: 0.2}
  sparsity.m_sparsity: [4, 8, 16]
random:
  optimizer.lr: {min: 1e-5, max: 1e-2, log: true}
  optimizer.weight_decay: {min: 0, max: 0.1}
  optimizer.grad_accum_steps: {min: 1, max: 4, integer: true}
  data.dataset: {choices: [synthetic, SYNTHETIC]}
num_samples: 3
seed: 11
gpus_per_run: 2
)";

using Expander = absl::StatusOr<std::vector<ResolvedRun>> (*)(const v1::SweepSpec&);

std::vector<ResolvedRun> Expand(const std::string& text, Expander expand = &ExpandSweep) {
  auto sweep = ParseSweepYaml(text, "pinned.yaml");
  EXPECT_TRUE(sweep.ok()) << sweep.status();
  if (!sweep.ok()) return {};
  auto runs = expand(*sweep);
  EXPECT_TRUE(runs.ok()) << runs.status();
  return runs.ok() ? *runs : std::vector<ResolvedRun>();
}

// One digest over everything a run carries, in run order. `legacy`: with each dense run's hash from before
// dense runs ignored their N:M keys (its legacy_content_hash), which is what the database stores for it.
std::string DigestOfAll(const std::vector<ResolvedRun>& runs, bool legacy = false) {
  std::string all;
  for (const ResolvedRun& r : runs) {
    // The run's spec as wire version 1 carried it: the pins date from then.
    const std::string wire = testing::LegacyWireBytes(r.config);
    const std::string& hash =
        legacy && !r.legacy_content_hash.empty() ? r.legacy_content_hash : r.content_hash;
    all += LabelsToString(r.labels) + "\n" + r.canonical_yaml + hash + "\n" + wire + "\n";
  }
  return Sha256Hex(all);
}

// Issue 40: a dense run's hash ignores the N:M keys it cannot read (schemas/content_hash.h), a deliberate
// change of the dense runs' hashes only. Their hashes from before are kept as legacy_content_hash, and with
// them the digest is the one pinned before, so nothing else moved; the coordinator looks stored dense runs
// up by it.
TEST(SweepPinnedTest, HashesAndTextsAreUnchanged) {
  const auto runs = Expand(kSweep);
  ASSERT_EQ(runs.size(), 36u);
  EXPECT_EQ(runs[0].content_hash, "c59036874a9ec970a383fa10ca0897a79d23be9851e2cb2c2d197c809055a94c");
  EXPECT_EQ(runs[0].legacy_content_hash, "f0b5300fa4a4c7d202dc523210ceacbe0010850656586a8eabac0ed13ccc921d");
  EXPECT_EQ(runs[17].content_hash, "c578ddc82fb2948c53cce383bcfd8eb4d913f1a186c43436bab6da81877c0494");
  EXPECT_EQ(runs[35].content_hash, "5660100c25a6aa69339bee68852e1f66f4fbe51aa3d9658fe6b12f9a4a106fae");
  for (size_t i = 9; i < runs.size(); ++i) EXPECT_EQ(runs[i].legacy_content_hash, "") << i;  // Not dense.
  EXPECT_EQ(DigestOfAll(runs, /*legacy=*/true),
            "a2f933c9e2ecf3a8cba5f4e4feebc7e30a021ce731ea9425c1c2bbd0cbe8f930");
  EXPECT_EQ(DigestOfAll(runs), "4f350dd2ef3badc2024b5aaf7acb48ea43e87d72f3fd589941e8daefbd6b07db");
  EXPECT_EQ(runs[20].canonical_yaml,
            "name: phased run\n"
            "seed: 7\n"
            "model:\n"
            "  name: vit_nano_patch7_28\n"
            "  num_classes: 0\n"
            "  img_size: 0\n"
            "  in_chans: 0\n"
            "  drop_rate: 0\n"
            "  drop_path_rate: 0.1\n"
            "  attn_drop_rate: 0\n"
            "data:\n"
            "  dataset: synthetic\n"
            "  path: \"\"\n"
            "  train_subset: 0\n"
            "  eval_subset: 0\n"
            "  batch_size: 32\n"
            "  eval_batch_size: 256\n"
            "  random_crop_padding: 0\n"
            "  hflip: 0.5\n"
            "  synthetic_size: 1024\n"
            "optimizer:\n"
            "  name: adamw\n"
            "  lr: 0.00030518418816570113\n"
            "  weight_decay: 0.015033278855578314\n"
            "  beta1: 0.9\n"
            "  beta2: 0.999\n"
            "  eps: 1e-08\n"
            "  clip_grad_norm: 1\n"
            "  label_smoothing: 0\n"
            "  mixup_alpha: 0\n"
            "  grad_accum_steps: 4\n"
            "schedule:\n"
            "  epochs: 4\n"
            "  warmup_epochs: 0.5\n"
            "  min_lr: 1e-05\n"
            "  warmup_lr: 1e-06\n"
            "  log_every_steps: 0\n"
            "resources:\n"
            "  gpus: 2\n"
            "  cpu_threads: 1\n"
            "sparsity:\n"
            "  sparsity_type: SRSTE\n"
            "  n_sparsity: 2\n"
            "  m_sparsity: 4\n"
            "  n_sparsity_qkv: 2\n"
            "  m_sparsity_qkv: 4\n"
            "  decay_type: STEP\n"
            "  decay_coef: 0.0002\n"
            "  structure_decay_flag: false\n"
            "  structure_decay_type: SPARSIFY\n"
            "  structure_decay_start_multiple: 8\n"
            "  dense_steps: 0\n"
            "  fine_tune_steps: 0\n"
            "  sparsity_loc: FF,Q,K,V\n"
            "  sparse_dim: ROW\n"
            "  prune_rate: 0.5\n"
            "  srste_lambda: 0.0002\n"
            "  phases: [{kind: DENSE, fraction: 0.25}, {kind: SPARSE, fraction: 0.5}, {kind: FINE_TUNE, "
            "fraction: 0.25}]\n"
            "  dynamic: []\n");
}

TEST(SweepPinnedTest, FastExpansionEqualsGenericOne) {
  const auto fast = Expand(kSweep);
  const auto generic = Expand(kSweep, &testing::ExpandSweepGeneric);
  ASSERT_EQ(fast.size(), generic.size());
  EXPECT_EQ(DigestOfAll(fast), DigestOfAll(generic));
  for (size_t i = 0; i < fast.size(); ++i) EXPECT_EQ(fast[i].config, generic[i].config) << i;
}

// An axis that switches the whole sparsity section between N:M and dynamic groups (§7), in both directions
// from either base, with overrides into N:M keys next to it.
constexpr char kDynamicAxisSweep[] = R"(name: dyn-axis
base:
  model: {name: vit_micro_patch4_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 2}
  sparsity: {sparsity_type: STRUCTURED_NM, n_sparsity: 2, m_sparsity: 4}
grid:
  method:
    nm: {sparsity.sparsity_type: STRUCTURED_NM, sparsity.dynamic: "[]", sparsity.m_sparsity: 8}
    rigl: {sparsity.sparsity_type: UNSTRUCTURED,
           sparsity.dynamic: "[{algorithm: rigl, sparsity: 0.9, param_filter: 'blocks.*.mlp.*', update: {freq: 20}}]"}
    gmp_cycle: {sparsity.sparsity_type: UNSTRUCTURED, sparsity.dynamic: "[{algorithm: gmp, sparsity: {type: cycle,
      start_step: 3, cycle: [{type: power, start_value: 0, end_value: 0.5, end_step: 10}, {type: exp,
      start_value: 0.5, decay: 0.9, end_step: 4}]}, balance_in_groups: 4, init_method: topk,
      drop_fraction: {type: cosine, start_value: 0.3, end_step: 50}}]"}
  seed: [0, 1]
)";

TEST(SweepPinnedTest, FastExpansionEqualsGenericOneAcrossDynamicAxis) {
  std::string from_dynamic_base = kDynamicAxisSweep;
  const std::string nm_base = "sparsity: {sparsity_type: STRUCTURED_NM, n_sparsity: 2, m_sparsity: 4}";
  from_dynamic_base.replace(
      from_dynamic_base.find(nm_base), nm_base.size(),
      "sparsity: {sparsity_type: UNSTRUCTURED, dynamic: [{algorithm: set, sparsity: 0.5}]}");
  for (const std::string& text : {std::string(kDynamicAxisSweep), from_dynamic_base}) {
    const auto fast = Expand(text);
    const auto generic = Expand(text, &testing::ExpandSweepGeneric);
    ASSERT_EQ(fast.size(), 6u) << text;
    ASSERT_EQ(fast.size(), generic.size());
    EXPECT_EQ(DigestOfAll(fast), DigestOfAll(generic));
    for (size_t i = 0; i < fast.size(); ++i) EXPECT_EQ(fast[i].config, generic[i].config) << i;
    EXPECT_FALSE(fast[0].config.sparsity.IsDynamic()) << fast[0].canonical_yaml;
    EXPECT_TRUE(fast[2].config.sparsity.IsDynamic()) << fast[2].canonical_yaml;
    EXPECT_EQ(fast[4].config.sparsity.dynamic.at(0).sparsity.cycle.size(), 2u) << fast[4].canonical_yaml;
  }
}

TEST(SweepPinnedTest, BenchSweepHashes) {
  std::string text =
      "base:\n  model: {name: vit_micro_patch4_28}\n  data: {dataset: synthetic, batch_size: "
      "32}\n  schedule: {epochs: 1}\n  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, "
      "m_sparsity: 4}\ngrid:\n  seed: [0, 1, 9223372036854775807]\n";
  const auto runs = Expand(text);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(DigestOfAll(runs), DigestOfAll(Expand(text, &testing::ExpandSweepGeneric)));
  EXPECT_EQ(DigestOfAll(runs), "a6c058d084e229930e099919192f3bf6ffee7211bd5a281aa099740c0daf3467");
}

// The canonical text, content hash and wire bytes of specs with the sections and values that the direct
// writer hands to the emitter (semi_structured with an empty list, dynamic groups with schedules and a cycle,
// quoted strings), pinned to what they were before the key tables wrote them.
TEST(SweepPinnedTest, CanonicalFormsOfEverySectionAreUnchanged) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"{model: {name: vit_nano_patch7_28}, data: {dataset: synthetic, batch_size: 32}, sparsity: "
       "{sparsity_type: "
       "SRSTE, sparsity_loc: FF, phases: [{sparse: 0.5}, {fine_tune: 0.5}]}, semi_structured: {layers: "
       "[\"blocks.*.mlp.fc1\"], mask: transposable, dense_after: {phase: 1}, decision_cache: /tmp/c.tsv}}",
       "8c72531c2f79de2cb9342202f602aa8a7f86c7fadd654cf64062899dfb47c0e6",
       "7c0e65a9da458826721c564f556ef516a0aebb51605fda1b1a379dd59adc07c5"},
      {"{name: \"null\", model: {name: vit_micro_patch4_28}, data: {dataset: synthetic, batch_size: 32, "
       "path: \"a: "
       "b\"}, resources: {precision: bf16}, sparsity: [{param_filter: \"blocks.*.mlp.*\", algorithm: rigl, "
       "sparsity: 0.9, drop_fraction: {type: cosine, start_value: 0.3, end_value: 0, end_step: 5000}, "
       "update: "
       "{freq: 20, start: 5, stop: 400}}, {algorithm: gmp, sparsity: {type: cycle, start_step: 3, cycle: "
       "[{type: "
       "power, start_value: 0, end_value: 0.5, end_step: 10}, {type: exp, start_value: 0.5, decay: 0.9, "
       "end_step: "
       "4}]}, balance_out_groups: 4, init_method: topk}]}",
       "0e0f4a382184271ae1326aac49407875b89c53b988079a75f9074771d09feabb",
       "42fc31b7e96e944f3c67d122c87440005ae4106d3bbf951d7735e75eb7a3adad"},
  };
  for (const auto& [text, hash, wire_digest] : cases) {
    const auto config = ParseExperimentYaml(text, "pinned.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(ContentHash(*config), hash) << CanonicalYaml(*config);
    EXPECT_EQ(Sha256Hex(testing::LegacyWireBytes(*config)), wire_digest);
  }
  const auto semi = ParseExperimentYaml(std::get<0>(cases[0]), "pinned.yaml");
  EXPECT_NE(CanonicalYaml(*semi).find("  activation_layers:\n    []\n"), std::string::npos)
      << CanonicalYaml(*semi);
}

TEST(SweepPinnedTest, ErrorsAreUnchanged) {
  const std::string base =
      "base:\n  model: {name: vit_nano_patch7_28}\n  data: {dataset: synthetic}\n"
      "  sparsity: {sparsity_type: STRUCTURED_NM}\n";
  const std::vector<std::string> grids = {
      "grid:\n  sparsity.m_sparsity: [8, 3]\n",
      "grid:\n  sparsity.n_sparsity: [2, 6]\n",
      "grid:\n  sparsity.sparsity_loc: [FFQKV]\n  sparsity.m_sparsity_qkv: [3]\n",
      "grid:\n  optimizer.beta1: [1]\n",
      "grid:\n  data.batch_size: [33]\n  resources.gpus: [2]\n",
      "grid:\n  schedule.warmup_epochs: [2]\n",
      "grid:\n  model.name: [vit_nope]\n",
      "grid:\n  data.dataset: [fashion_mnist]\n  model.name: [vit_small_patch16_224]\n",
      "grid:\n  sparsity.phases: [\"[{sparse: 0.5}]\"]\n",
      "grid:\n  sparsity.sparsity_loc: [FFX]\n",
      "grid:\n  sparsity.dense_steps: [0.6]\n  sparsity.fine_tune_steps: [0.5]\n",
      "grid:\n  seed: [-1]\n",
      "grid:\n  model.img_size: [30]\n",
      "grid:\n  sparsity.structure_decay_flag: [true]\n  sparsity.m_sparsity: [1024]\n"
      "  sparsity.n_sparsity: [1]\n  sparsity.structure_decay_type: [FINE]\n  sparsity.dense_steps: [0.25]\n"
      "  schedule.epochs: [8]\n",
  };
  std::string all;
  for (const std::string& grid : grids) {
    auto sweep = ParseSweepYaml(base + grid, "e.yaml");
    ASSERT_TRUE(sweep.ok()) << sweep.status();
    auto runs = ExpandSweep(*sweep);
    EXPECT_FALSE(runs.ok()) << grid;
    all += runs.status().ToString() + "\n";
    EXPECT_EQ(runs.status(), testing::ExpandSweepGeneric(*sweep).status());
  }
  EXPECT_EQ(
      all,
      "INVALID_ARGUMENT: run 1 (sparsity.m_sparsity=3): sparsity: layer blocks.0.mlp.fc1.weight (FF, shape "
      "[128, 32], 4096 weights) cannot use 2:3: its number of weights is not a multiple of M = 3\n"
      "INVALID_ARGUMENT: run 1 (sparsity.n_sparsity=6): sparsity.n_sparsity: value 6 is out of range: must "
      "be <= m_sparsity (4)\n"
      "INVALID_ARGUMENT: run 0 (sparsity.sparsity_loc=FFQKV, sparsity.m_sparsity_qkv=3): sparsity: layer "
      "blocks.0.attn.qkv.weight (Q, shape [32, 32], 1024 weights) cannot use 2:3: its number of weights is "
      "not a multiple of M = 3\n"
      "INVALID_ARGUMENT: run 0 (optimizer.beta1=1): optimizer.beta1: value 1 is out of range: must be in [0, "
      "1)\n"
      "INVALID_ARGUMENT: run 0 (data.batch_size=33, resources.gpus=2): data.batch_size: value 33 is not "
      "divisible by resources.gpus (2): the global batch is split evenly over ranks\n"
      "INVALID_ARGUMENT: run 0 (schedule.warmup_epochs=2): schedule.warmup_epochs: value 2 is out of range: "
      "must be <= schedule.epochs (1)\n"
      "INVALID_ARGUMENT: run 0 (model.name=vit_nope): model.name: unknown model 'vit_nope'; known models: "
      "swinv2_base_window12_192, swinv2_base_window12to16_192to256, swinv2_base_window12to24_192to384, "
      "swinv2_base_window16_256, swinv2_base_window8_256, swinv2_large_window12_192, "
      "swinv2_large_window12to16_192to256, swinv2_large_window12to24_192to384, "
      "swinv2_micro_window7_28, swinv2_small_window16_256, swinv2_small_window8_256, "
      "swinv2_tiny_window16_256, "
      "swinv2_tiny_window8_256, vit_base_patch16_224, vit_large_patch16_224, vit_micro_patch4_28, "
      "vit_nano_patch7_28, "
      "vit_small_patch16_224, vit_tiny_patch16_224\n"
      "INVALID_ARGUMENT: run 0 (data.dataset=fashion_mnist, model.name=vit_small_patch16_224): model: "
      "fashion_mnist images are 28x28x1 in 10 classes, but vit_small_patch16_224 is set up for 224x224x3 in "
      "1000 classes: set model.img_size, model.in_chans, model.num_classes\n"
      "INVALID_ARGUMENT: run 0 (sparsity.phases=[{sparse: 0.5}]): line 1: sparsity.phases: phase fractions "
      "sum to 0.5: must sum to 1\n"
      "INVALID_ARGUMENT: run 0 (sparsity.sparsity_loc=FFX): sparsity.sparsity_loc: value 'FFX' is not a set "
      "of locations: must be letters/words over FF, Q, K, V, O, C (e.g. FF, FFQKV, FF,Q,K,V)\n"
      "INVALID_ARGUMENT: run 0 (sparsity.dense_steps=0.6, sparsity.fine_tune_steps=0.5): "
      "sparsity.fine_tune_steps: value 0.5 is out of range: dense_steps + fine_tune_steps must be < 1 (got "
      "1.1)\n"
      "INVALID_ARGUMENT: run 0 (seed=-1): seed: value -1 is out of range: must be >= 0\n"
      "INVALID_ARGUMENT: run 0 (model.img_size=30): model.img_size: value 30 is not a multiple of the patch "
      "size 7 of vit_nano_patch7_28\n"
      "INVALID_ARGUMENT: run 0 (sparsity.structure_decay_flag=true, sparsity.m_sparsity=1024, "
      "sparsity.n_sparsity=1, sparsity.structure_decay_type=FINE, sparsity.dense_steps=0.25, "
      "schedule.epochs=8): sparsity: layer blocks.0.mlp.fc1.weight (FF, shape [128, 32], 4096 weights) "
      "cannot use 8:8192 (structure decay stage from epoch 2): its number of weights is not a multiple of M "
      "= 8192\n");
}

}  // namespace
}  // namespace nmsparse
