#include "schemas/reference_config.h"

#include <algorithm>
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "schemas/reference_key_table.h"

namespace nmsparse {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ReferenceConfigTest, PaperConfigLoadsUnchanged) {
  std::vector<std::string> warnings;
  auto c = LoadExperimentFile("schemas/testdata/reference_vit_base_training.yaml", &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model.name, "vit_base_patch16_224");
  EXPECT_EQ(c->model.num_classes, 0);  // null: the model's own 1000.
  EXPECT_DOUBLE_EQ(c->model.drop_rate, 0.1);
  EXPECT_DOUBLE_EQ(c->model.drop_path_rate, 0.1);
  EXPECT_EQ(c->data.dataset, "imagefolder");
  EXPECT_EQ(c->data.workers, 16);
  EXPECT_EQ(c->data.path, "tmp/scratch/datasets");
  EXPECT_EQ(c->data.batch_size, 256);
  EXPECT_DOUBLE_EQ(c->data.hflip, 0.5);
  // lr: null, so lr_base 1e-3 * sqrt(256 / 4096) (train.py's sqrt scaling for adamw).
  EXPECT_DOUBLE_EQ(c->optimizer.lr, 0.00025);
  EXPECT_DOUBLE_EQ(c->optimizer.weight_decay, 0.01);
  EXPECT_DOUBLE_EQ(c->optimizer.eps, 1e-8);
  EXPECT_DOUBLE_EQ(c->optimizer.beta1, 0.9);
  EXPECT_DOUBLE_EQ(c->optimizer.clip_grad_norm, 1.0);
  EXPECT_DOUBLE_EQ(c->optimizer.mixup_alpha, 0.5);
  EXPECT_DOUBLE_EQ(c->optimizer.label_smoothing, 0.0);
  // timm's loss and Mixup keys are honoured (issue 24): BCE over batch-mode mixup, cutmix off.
  EXPECT_TRUE(c->optimizer.bce_loss);
  EXPECT_DOUBLE_EQ(c->optimizer.bce_target_thresh, 0.0);
  EXPECT_DOUBLE_EQ(c->optimizer.cutmix_alpha, 0.0);
  EXPECT_DOUBLE_EQ(c->optimizer.cutmix_max, 0.0);
  EXPECT_EQ(c->optimizer.mixup_mode, "batch");
  EXPECT_DOUBLE_EQ(c->optimizer.mixup_prob, 1.0);
  EXPECT_DOUBLE_EQ(c->optimizer.mixup_switch_prob, 0.5);
  EXPECT_EQ(c->optimizer.mixup_off_epoch, 0);
  EXPECT_EQ(c->schedule.epochs, 350);
  EXPECT_DOUBLE_EQ(c->schedule.warmup_epochs, 15);
  EXPECT_DOUBLE_EQ(c->schedule.warmup_lr, 1e-7);
  EXPECT_DOUBLE_EQ(c->schedule.min_lr, 1e-7);
  EXPECT_EQ(c->schedule.log_every_steps, 50);
  EXPECT_EQ(c->seed, 0u);
  EXPECT_EQ(c->sparsity.sparsity_type, SparsityType::kStructuredNM);
  EXPECT_EQ(c->sparsity.decay_type, DecayType::kExp);
  EXPECT_DOUBLE_EQ(c->sparsity.decay_coef, 1e-4);
  EXPECT_EQ(c->sparsity.nm, (NM{1, 32}));
  EXPECT_EQ(c->sparsity.nm_qkv, (NM{1, 8}));
  EXPECT_EQ(c->sparsity.structure_decay_type, StructureDecayType::kFine);
  EXPECT_FALSE(c->sparsity.structure_decay_flag);
  EXPECT_TRUE(ValidateExperiment(*c).ok()) << ValidateExperiment(*c);

  // timm's transform keys are honoured (issue 23), with no warning for any of them.
  EXPECT_EQ(c->data.auto_augment, "rand-m15-n2-p1-mstd0");
  EXPECT_EQ(c->data.crop_scale, (std::vector<double>{0.08, 1.0}));
  EXPECT_EQ(c->data.train_interpolation, "random");
  EXPECT_DOUBLE_EQ(c->data.color_jitter, 0.0);  // null: timm's None, no ColorJitter.
  EXPECT_DOUBLE_EQ(c->data.re_prob, 0.0);
  EXPECT_EQ(c->data.re_mode, "pixel");
  EXPECT_DOUBLE_EQ(c->data.crop_pct, 0.0);  // null: the model's own.
  for (const char* key :
       {"aa", "scale", "ratio", "train_interpolation", "hflip", "vflip", "color_jitter", "reprob", "remode",
        "recount", "crop_pct", "interpolation", "mean", "std", "img_size", "input_size"}) {
    for (const auto& w : warnings)
      EXPECT_EQ(w.find(std::string("key: ") + key + " "), std::string::npos) << w;
  }
  // amp with amp_dtype bfloat16: bf16 autocast, not a warning.
  EXPECT_EQ(c->resources.precision, "bf16");
  EXPECT_FALSE(Has(warnings, "ignored reference key: amp = true"));
  EXPECT_FALSE(Has(warnings, "ignored reference key: amp_dtype = bfloat16"));
  EXPECT_FALSE(Has(warnings, "ignored reference key: bce_loss = true"));
  EXPECT_FALSE(Has(warnings, "ignored reference key: workers = 16"));
  for (const auto& w : warnings) EXPECT_EQ(w.find("reference key dataset"), std::string::npos) << w;
  // Neutral values (timm's defaults, nulls) are not reported.
  for (const auto& w : warnings) {
    for (const char* quiet : {"momentum", "sched ", "reprob", "cutmix ", "ratio", "gp ", "color_jitter"}) {
      EXPECT_EQ(w.find(std::string("key: ") + quiet), std::string::npos) << w;
    }
  }
}

// No warning left: the datasets map onto imagefolder and cifar10 (issue 23), and no recipe key warns.
const std::map<std::string, std::set<std::string>>& ExpectedWarnings() {
  static const auto* expected = new std::map<std::string, std::set<std::string>>{
      {"reference_vit_base_training.yaml", {}},
      {"reference_vit_b_train.yaml", {}},
      {"reference_swin_v2_b_train.yaml", {}},
  };
  return *expected;
}

// No silent recipe change (issue 24 item 8): the reference's three configs load and validate, and every key
// is honoured, harmless, or at timm's default: no warning about a recipe key.
TEST(ReferenceConfigTest, ReferenceConfigsLoadWithoutRecipeWarnings) {
  for (const auto& [file, expected] : ExpectedWarnings()) {
    std::vector<std::string> warnings;
    auto c = LoadExperimentFile("schemas/testdata/" + file, &warnings);
    ASSERT_TRUE(c.ok()) << file << ": " << c.status();
    EXPECT_TRUE(ValidateExperiment(*c).ok()) << file << ": " << ValidateExperiment(*c);
    // Issue 40: keys that are accepted and ignored are named, each with why it changes nothing trained; they
    // are harmless keys, never recipe keys.
    std::vector<std::string> others;
    for (const std::string& w : warnings) {
      if (w.find(" is ignored (") == std::string::npos) {
        others.push_back(w);
        continue;
      }
      EXPECT_NE(w.find("): it does not change what is trained"), std::string::npos) << w;
      const std::string key = w.substr(w.find(": ") + 2, w.find(": ", w.find(": ") + 2) - w.find(": ") - 2);
      const UnmappedReferenceKey* unmapped = FindUnmappedReferenceKey(key);
      ASSERT_NE(unmapped, nullptr) << w;
      EXPECT_EQ(unmapped->use, ReferenceKeyUse::kHarmless) << w;
    }
    EXPECT_EQ(std::set<std::string>(others.begin(), others.end()), expected) << file;
    EXPECT_EQ(others.size(), expected.size()) << file;
    if (file == "reference_vit_base_training.yaml") {
      EXPECT_TRUE(Has(warnings,
                      "schemas/testdata/reference_vit_base_training.yaml:58: log_wandb: false is ignored "
                      "(logging only): it does not change what is trained"))
          << file;
    }
  }
  auto swin = LoadExperimentFile("schemas/testdata/reference_swin_v2_b_train.yaml");
  ASSERT_TRUE(swin.ok()) << swin.status();
  EXPECT_EQ(swin->model.name, "swinv2_base_window16_256");
  EXPECT_EQ(swin->model.global_pool, "avg");  // gp: avg, SwinV2's own pooling.
  EXPECT_EQ(swin->sparsity.nm, (NM{2, 4}));
  EXPECT_EQ(swin->schedule.cooldown_epochs, 5);
}

// A key that would change the mathematics and that nmsparse does not implement is an error naming key and
// value; at timm's default or null it is accepted silently. Any value of a harmless key is accepted, and
// named as ignored with its line (issue 40).
TEST(ReferenceConfigTest, UnimplementedRecipeKeysAreErrorsHarmlessKeysAreNamed) {
  auto err = [](const std::string& text) {
    auto c = ParseExperimentYaml("model: vit_nano_patch7_28\n" + text, "flat.yaml");
    EXPECT_FALSE(c.ok()) << text;
    return std::string(c.status().message());
  };
  EXPECT_EQ(err("jsd_loss: true\n"),
            "flat.yaml:2: jsd_loss: value true is not implemented (the Jensen-Shannon loss over augmentation "
            "splits); only timm's default false or null is accepted");
  EXPECT_EQ(err("epoch_repeats: 2\n"),
            "flat.yaml:2: epoch_repeats: value 2 is not implemented (the length of an epoch); only timm's "
            "default 0 or null is accepted");
  EXPECT_EQ(
      err("gp: max\n"),
      "flat.yaml:2: gp: value 'max' is not implemented: nmsparse's models pool by token or avg (null: the "
      "model's own)");
  std::vector<std::string> warnings;
  auto quiet = ParseExperimentYaml(
      "model: vit_nano_patch7_28\njsd_loss: false\nepoch_repeats: 0.0\nlr_noise: null\ngp: token\n"
      "workers: 32\npin_mem: true\nlog_wandb: true\ntorchscript: true\nmomentum: 0.5\n",
      "flat.yaml", &warnings);
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_EQ(
      warnings,
      (std::vector<std::string>{
          "flat.yaml:7: pin_mem: true is ignored (loader speed only): it does not change what is trained",
          "flat.yaml:8: log_wandb: true is ignored (logging only): it does not change what is trained",
          "flat.yaml:9: torchscript: true is ignored (compiles the same model): it does not change what is "
          "trained",
          "flat.yaml:10: momentum: 0.5 is ignored (read by SGD-family optimizers only, and opt must be "
          "adamw): it does not change what is trained",
      }));
  EXPECT_EQ(quiet->model.global_pool, "token");
}

// The table is the one place a key's treatment is declared: unique keys, parseable defaults, and every
// unimplemented key's default accepted.
TEST(ReferenceConfigTest, UnmappedKeyTableIsConsistent) {
  std::set<std::string> seen;
  for (const UnmappedReferenceKey& k : UnmappedReferenceKeys()) {
    EXPECT_TRUE(seen.insert(k.key).second) << k.key;
    EXPECT_FALSE(k.why.empty()) << k.key;
    EXPECT_TRUE(IsReferenceKey(k.key)) << k.key;
    if (k.use == ReferenceKeyUse::kHarmless) continue;
    std::vector<std::string> warnings;
    auto c = ParseExperimentYaml("model: vit_nano_patch7_28\n" + k.key + ": " + k.timm_default + "\n",
                                 "flat.yaml", &warnings);
    EXPECT_TRUE(c.ok()) << k.key << ": " << c.status();
    EXPECT_TRUE(warnings.empty()) << k.key;
  }
}

// cutmix_minmax, a list of two fractions, maps onto optimizer.cutmix_min and cutmix_max.
TEST(ReferenceConfigTest, CutmixMinmaxMapsToItsBounds) {
  auto c = ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224, cutmix_minmax: [0.2, 0.8], "
                                           "bce_loss: true, bce_sum: true, bce_target_thresh: 0.2, "
                                           "mixup_mode: elem, mixup_off_epoch: 5}"),
                                nullptr);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->optimizer.cutmix_min, 0.2);
  EXPECT_DOUBLE_EQ(c->optimizer.cutmix_max, 0.8);
  EXPECT_TRUE(c->optimizer.MixupActive());
  EXPECT_TRUE(c->optimizer.bce_sum);
  EXPECT_DOUBLE_EQ(c->optimizer.bce_target_thresh, 0.2);
  EXPECT_EQ(c->optimizer.mixup_mode, "elem");
  EXPECT_EQ(c->optimizer.mixup_off_epoch, 5);
  auto bad = ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224, cutmix_minmax: 0.5}"), nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("cutmix_minmax: value"), std::string::npos)
      << bad.status();
}

// aug_repeats and layer_decay are honoured (data.aug_repeats, optimizer.layer_decay), not warned about; null
// layer_decay (train.py's default) leaves it off.
TEST(ReferenceConfigTest, AugRepeatsAndLayerDecayMapToTheirKeys) {
  std::vector<std::string> warnings;
  auto c = ParseReferenceConfig(
      YAML::Load("{model: vit_tiny_patch16_224, aug_repeats: 3, layer_decay: 0.65}"), &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->data.aug_repeats, 3);
  EXPECT_DOUBLE_EQ(c->optimizer.layer_decay, 0.65);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  auto off = ParseReferenceConfig(
      YAML::Load("{model: vit_tiny_patch16_224, aug_repeats: 0, layer_decay: null}"), &warnings);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->data.aug_repeats, 0);
  EXPECT_EQ(off->optimizer.layer_decay, 0.0);
}

// model_ema and model_ema_decay are honoured (issue 24): model.ema, model.ema_decay, without a warning;
// model_ema_warmup (timm 1.0's ModelEmaV3 warm-up, which changes the decay) is refused.
TEST(ReferenceConfigTest, ModelEmaMapsToModelEma) {
  std::vector<std::string> warnings;
  auto c = ParseReferenceConfig(
      YAML::Load("{model: vit_tiny_patch16_224, model_ema: true, model_ema_decay: 0.999, "
                 "model_ema_force_cpu: false}"),
      &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->model.ema);
  EXPECT_DOUBLE_EQ(c->model.ema_decay, 0.999);
  // Only the harmless key is named as ignored (issue 40); the EMA keys are honoured.
  EXPECT_EQ(warnings,
            (std::vector<std::string>{"line 1: model_ema_force_cpu: false is ignored (where the EMA is "
                                      "kept, not what it computes): it does not change what is trained"}));
  auto defaults = ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224}"), nullptr);
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->model.ema);
  EXPECT_DOUBLE_EQ(defaults->model.ema_decay, 0.9998);  // timm's train.py default.
  EXPECT_FALSE(
      ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224, model_ema_warmup: true}"), nullptr)
          .ok());
}

// timm's initial_checkpoint is model.initial_checkpoint, with pretrained true or false, without a warning;
// pretrained: true without it is refused (nmsparse downloads no weights), naming the key.
TEST(ReferenceConfigTest, InitialCheckpointMapsToTheModelsInitialWeights) {
  std::vector<std::string> warnings;
  auto c = ParseReferenceConfig(
      YAML::Load("{model: vit_tiny_patch16_224, pretrained: true, initial_checkpoint: /data/vit_tiny}"),
      &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->model.initial_checkpoint, "/data/vit_tiny");
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  const std::string digest(64, 'c');
  auto digested =
      ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224, initial_checkpoint: /data/w, "
                                      "initial_checkpoint_sha256: " +
                                      digest + "}"),
                           nullptr);
  ASSERT_TRUE(digested.ok()) << digested.status();
  EXPECT_EQ(digested->model.initial_checkpoint_sha256, digest);
  auto defaults = ParseReferenceConfig(
      YAML::Load("{model: vit_tiny_patch16_224, pretrained: false, initial_checkpoint: ''}"), nullptr);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->model.initial_checkpoint, "");
  auto refused = ParseReferenceConfig(YAML::Load("{model: vit_tiny_patch16_224, pretrained: true}"), nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("pretrained: value true needs initial_checkpoint: PATH"),
            std::string::npos)
      << refused.status();
}

// train.py's amp: bfloat16 is bf16 autocast, float16 (train.py's default dtype) fp16 with loss scaling, both
// without a warning; another dtype is an error naming the key; amp off ignores amp_dtype.
TEST(ReferenceConfigTest, AmpMapsToPrecision) {
  auto load = [](const std::string& text, std::vector<std::string>* warnings) {
    auto c = ParseExperimentYaml("model: vit_nano_patch7_28\n" + text, "flat.yaml", warnings);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->resources.precision : "";
  };
  std::vector<std::string> warnings;
  EXPECT_EQ(load("amp: true\namp_dtype: BFloat16\n", &warnings), "bf16");
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(load("amp: false\namp_dtype: bfloat16\n", &warnings), "fp32");
  EXPECT_EQ(load("amp_dtype: bfloat16\n", &warnings), "fp32");
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(load("amp: true\n", &warnings), "fp16");
  EXPECT_EQ(load("amp: true\namp_dtype: float16\n", &warnings), "fp16");
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  auto half = ParseExperimentYaml("model: vit_nano_patch7_28\namp: true\namp_dtype: half\n", "flat.yaml");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("amp_dtype: value 'half' is not float16 or bfloat16"),
            std::string::npos)
      << half.status();
  auto bad = ParseExperimentYaml("model: vit_nano_patch7_28\namp: maybe\n", "flat.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("flat.yaml:2: amp: value 'maybe' is not a boolean"),
            std::string::npos)
      << bad.status();
}

TEST(ReferenceConfigTest, LrScalingAndErrors) {
  auto linear = ParseExperimentYaml(
      "model: vit_nano_patch7_28\nopt: adamw\nlr: null\nlr_base: 0.004\nlr_base_size: 512\nlr_base_scale: "
      "linear\n"
      "batch_size: 64\n",
      "flat.yaml");
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_DOUBLE_EQ(linear->optimizer.lr, 0.0005);
  auto direct = ParseExperimentYaml("model: vit_nano_patch7_28\nlr: 0.01\nlr_base: 0.004\n", "flat.yaml");
  ASSERT_TRUE(direct.ok());
  EXPECT_DOUBLE_EQ(direct->optimizer.lr, 0.01);
  auto betas =
      ParseExperimentYaml("model: vit_nano_patch7_28\nopt_betas: [0.8, 0.95]\nsparsity_loc: ffqkv\n", "");
  ASSERT_TRUE(betas.ok()) << betas.status();
  EXPECT_DOUBLE_EQ(betas->optimizer.beta2, 0.95);
  EXPECT_EQ(betas->sparsity.locations.size(), 4u);

  // timm's Lion keeps its own betas (0.9, 0.99) unless opt_betas is given.
  auto lion = ParseExperimentYaml("model: vit_nano_patch7_28\nopt: lion\n", "");
  ASSERT_TRUE(lion.ok()) << lion.status();
  EXPECT_EQ(lion->optimizer.name, "lion");
  EXPECT_DOUBLE_EQ(lion->optimizer.beta1, 0.9);
  EXPECT_DOUBLE_EQ(lion->optimizer.beta2, 0.99);
  auto lion_betas =
      ParseExperimentYaml("model: vit_nano_patch7_28\nopt: Lion\nopt_betas: [0.95, 0.98]\n", "");
  ASSERT_TRUE(lion_betas.ok()) << lion_betas.status();
  EXPECT_DOUBLE_EQ(lion_betas->optimizer.beta2, 0.98);

  auto err = [](const std::string& text) {
    auto c = ParseExperimentYaml(text, "flat.yaml");
    EXPECT_FALSE(c.ok()) << text;
    return std::string(c.status().message());
  };
  EXPECT_EQ(err("model: vit_nano_patch7_28\nfoo: 1\n"),
            "flat.yaml:2: foo: unknown key: neither a timm train.py key nor an nmsparse key");
  EXPECT_EQ(err("model: vit_nano_patch7_28\nopt: sgd\n"),
            "flat.yaml:2: opt: value 'sgd' is not supported: nmsparse implements adamw and lion");
  EXPECT_EQ(err("model: vit_nano_patch7_28\nclip_grad: -1\n"),
            "flat.yaml:2: clip_grad: value -1 is out of range: must be >= 0");
  EXPECT_EQ(err("model: vit_nano_patch7_28\nlr: fast\n"),
            "flat.yaml:2: lr: value 'fast' is not a finite number");
  EXPECT_EQ(err("model: vit_nano_patch7_28\nm_sparsity: 0\n"),
            "flat.yaml:2: m_sparsity: value 0 is out of range: must be >= 1");
  EXPECT_EQ(err("model: vit_nano_patch7_28\nopt_betas: [0.9]\n"),
            "flat.yaml:2: opt_betas: value [0.9] is not a list of two betas");
  EXPECT_TRUE(IsReferenceKey("aa"));
  EXPECT_TRUE(IsReferenceKey("lr_base_size"));
  EXPECT_FALSE(IsReferenceKey("m_sparsity"));
}

}  // namespace
}  // namespace nmsparse

namespace nmsparse {
namespace {

// A flat reference config takes one dynamic sparsity group (§7) as top-level keys.
TEST(ReferenceConfigTest, FlatConfigTakesAnInlineDynamicGroup) {
  auto c = ParseExperimentYaml(R"(
model: vit_micro_patch4_28
algorithm: rigl
sparsity: 0.8
update: {freq: 50}
param_filter: "blocks.*"
)",
                               "flat.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sparsity.sparsity_type, SparsityType::kUnstructured);
  ASSERT_EQ(c->sparsity.dynamic.size(), 1u);
  EXPECT_EQ(c->sparsity.dynamic[0].algorithm, DynamicAlgorithm::kRigl);
  EXPECT_EQ(c->sparsity.dynamic[0].update.freq, 50);
  EXPECT_EQ(c->sparsity.dynamic[0].param_filter, std::vector<std::string>{"blocks.*"});
}

}  // namespace
}  // namespace nmsparse
