// ValidateExperiment: the checks of a spec beyond single keys, against the model catalogue.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "schemas/param_filter.h"
#include "schemas/pure_memo.h"
#include "schemas/semi_structured_layers.h"
#include "schemas/structure_decay.h"
#include "schemas/train_steps.h"
#include "schemas/trained_epochs.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

absl::Status Invalid(const std::string& path, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

std::string NMText(const NM& nm) { return absl::StrCat(nm.n, ":", nm.m); }

// A digest is of the weights file a run starts from (schemas/initial_weights_digest.h): one without a file
// would count in the content hash of a run that loads no weights.
absl::Status ValidateInitialWeightsDigest(const ModelConfig& model) {
  if (model.initial_checkpoint_sha256.empty() || !model.initial_checkpoint.empty()) return absl::OkStatus();
  return Invalid("model.initial_checkpoint_sha256",
                 absl::StrCat(model.initial_checkpoint_sha256,
                              " is given without model.initial_checkpoint: a digest is of the weights file a "
                              "run starts from; give the file, or leave the digest out"));
}

// timm's transform keys: ranges in order, one normalisation value per channel (or one for all).
absl::Status ValidateTransforms(const DataConfig& d, const ModelArch& arch) {
  for (const auto& [path, range] :
       {std::pair<const char*, const std::vector<double>*>{"data.crop_scale", &d.crop_scale},
        {"data.crop_ratio", &d.crop_ratio}}) {
    if ((*range)[0] > (*range)[1]) {
      return Invalid(path, absl::StrCat("[", (*range)[0], ", ", (*range)[1], "] is no range: min > max"));
    }
  }
  for (const auto& [path, values] :
       {std::pair<const char*, const std::vector<double>*>{"data.mean", &d.mean}, {"data.std", &d.std}}) {
    if (values->size() > 1 && static_cast<int>(values->size()) != arch.in_chans) {
      return Invalid(path, absl::StrCat(values->size(), " values for a model of ", arch.in_chans,
                                        " input channels: give one per channel, or one for all"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateModelAndData(const ExperimentConfig& c, const ModelArch& arch) {
  if (absl::Status st = ValidateModelArch(c.model, arch); !st.ok()) return st;
  if (c.data.dataset == "fashion_mnist" &&
      (arch.img_size != 28 || arch.in_chans != 1 || arch.num_classes != 10)) {
    return Invalid("model", absl::StrCat("fashion_mnist images are 28x28x1 in 10 classes, but ", arch.name,
                                         " is set up for ", arch.img_size, "x", arch.img_size, "x",
                                         arch.in_chans, " in ", arch.num_classes,
                                         " classes: set model.img_size, model.in_chans, model.num_classes"));
  }
  if (c.data.dataset == "shards" && c.data.path.empty()) {
    return Invalid("data.path", "missing: the shards dataset needs the directory of its shards");
  }
  if (c.data.path.empty() && IsStoredImageDataset(c.data.dataset)) {
    return Invalid("data.path",
                   absl::StrCat("missing: the ", c.data.dataset, " dataset needs its directory"));
  }
  if ((c.data.dataset == "cifar10" || c.data.dataset == "cifar100") && arch.in_chans != 3) {
    return Invalid("model.in_chans",
                   absl::StrCat(c.data.dataset, " images have 3 channels, not ", arch.in_chans));
  }
  return ValidateTransforms(c.data, arch);
}

// SparsifiableLayers(ResolveModel(model), locations): a pure function of these arguments, remembered on
// all of them, since every run of a sweep walks the same model's layers.
std::shared_ptr<const std::vector<LayerShape>> LayersAt(const ModelConfig& m, const ModelArch& arch,
                                                        const std::vector<SparsityLocation>& locations) {
  static auto* memo = new PureMemo<std::vector<LayerShape>>;
  std::string key = absl::StrCat(m.name, "/", m.img_size, "/", m.in_chans, "/", m.num_classes, "/",
                                 arch.patch_size, "/", arch.embed_dim, "/", arch.depth, "/",
                                 absl::StrJoin(arch.depths, ","), "/", arch.mlp_ratio, "/");
  for (SparsityLocation loc : locations) absl::StrAppend(&key, static_cast<int>(loc), ",");
  return memo->Get(key, [&] { return SparsifiableLayers(arch, locations); });
}

// S-STE's soft threshold and STEP's hard 2:4 (Hu et al.'s code for both) are defined for 2:4 groups of a
// linear's in-features only: anything else is refused with the key that asks for it. `recipe` names the
// recipe in the errors.
absl::Status ValidateTwoFourOnLinears(const SparsityConfig& s, const std::string& recipe) {
  const bool qkv = s.HasLocation(SparsityLocation::kQ) || s.HasLocation(SparsityLocation::kK) ||
                   s.HasLocation(SparsityLocation::kV);
  if (s.nm != NM{2, 4} || (qkv && s.nm_qkv != NM{2, 4})) {
    return Invalid(s.nm != NM{2, 4} ? "sparsity.n_sparsity" : "sparsity.n_sparsity_qkv",
                   absl::StrCat(recipe, " is 2:4 only, not ", NMText(s.nm != NM{2, 4} ? s.nm : s.nm_qkv)));
  }
  if (s.HasLocation(SparsityLocation::kC)) {
    return Invalid("sparsity.sparsity_loc", recipe + " sparsifies linears only: drop C");
  }
  if (s.sparse_dim != SparseDim::kRow) {
    return Invalid("sparsity.sparse_dim", recipe + " groups the in-features (ROW) only");
  }
  if (s.structure_decay_flag) {
    return Invalid("sparsity.structure_decay_flag", recipe + " has no structure decay");
  }
  return absl::OkStatus();
}

// STEP (§13) is an AdamW variant whose own switch test ends the dense phase: it needs AdamW, and the engine's
// phase keys would put a second dense phase (or a fine-tune the authors do not have) around it.
absl::Status ValidateStep(const ExperimentConfig& c) {
  const SparsityConfig& s = c.sparsity;
  if (absl::Status two_four = ValidateTwoFourOnLinears(s, "STEP"); !two_four.ok()) return two_four;
  if (c.optimizer.name != "adamw") {
    return Invalid("optimizer.name", absl::StrCat("value '", c.optimizer.name,
                                                  "' with sparsity.recipe STEP: STEP needs adamw (it freezes "
                                                  "Adam's second moment)"));
  }
  if (s.dense_fraction > 0.0) {
    return Invalid("sparsity.dense_steps", "STEP's switch test ends its dense phase: drop dense_steps");
  }
  if (s.fine_tune_fraction > 0.0) {
    return Invalid("sparsity.fine_tune_steps", "STEP has no fine-tune: drop fine_tune_steps");
  }
  if (!s.phases.empty()) {
    return Invalid("sparsity.phases", "STEP's switch test decides its phases: drop phases");
  }
  if (s.step_switch_min > s.step_switch_max) {
    return Invalid("sparsity.step_switch_max",
                   absl::StrCat("value ", yaml_util::FormatDouble(s.step_switch_max),
                                " is below sparsity.step_switch_min (",
                                yaml_util::FormatDouble(s.step_switch_min), ")"));
  }
  return absl::OkStatus();
}

// HU24's transposable mask tiles every sparse weight (block) in 4x4: both of its dimensions are multiples
// of 4.
absl::Status ValidateHu24Layer(const LayerShape& layer) {
  if (layer.shape.size() == 2 && layer.shape[0] % 4 == 0 && layer.shape[1] % 4 == 0) return absl::OkStatus();
  std::vector<std::string> dims;
  for (int64_t d : layer.shape) dims.push_back(absl::StrCat(d));
  return Invalid("sparsity.sparsity_loc",
                 absl::StrCat("HU24's transposable 2:4 mask tiles weights in 4x4, but layer ", layer.name,
                              " (", ToString(layer.location), ") is [", absl::StrJoin(dims, ", "),
                              "]: both dimensions must be multiples of 4"));
}

// Bi-Mask (§14) groups M in-features for its forward mask and M (permuted) output rows for its backward
// mask, on linears: one N:M for every location, and both dimensions of every sparse weight (block) multiples
// of M.
absl::Status ValidateBimask(const SparsityConfig& s) {
  const bool qkv = s.HasLocation(SparsityLocation::kQ) || s.HasLocation(SparsityLocation::kK) ||
                   s.HasLocation(SparsityLocation::kV);
  if (qkv && s.nm_qkv != s.nm) {
    return Invalid(s.nm_qkv.n != s.nm.n ? "sparsity.n_sparsity_qkv" : "sparsity.m_sparsity_qkv",
                   absl::StrCat("BIMASK uses one N:M for every linear, but qkv's ", NMText(s.nm_qkv),
                                " is not ", NMText(s.nm)));
  }
  if (s.HasLocation(SparsityLocation::kC)) {
    return Invalid("sparsity.sparsity_loc", "BIMASK sparsifies linears only: drop C");
  }
  if (s.sparse_dim != SparseDim::kRow) {
    return Invalid("sparsity.sparse_dim", "BIMASK's forward mask groups the in-features (ROW) only");
  }
  if (s.structure_decay_flag) {
    return Invalid("sparsity.structure_decay_flag", "BIMASK has no structure decay");
  }
  return absl::OkStatus();
}

absl::Status ValidateBimaskLayer(const LayerShape& layer, const NM& nm) {
  if (layer.shape.size() == 2 && layer.shape[0] % nm.m == 0 && layer.shape[1] % nm.m == 0) {
    return absl::OkStatus();
  }
  std::vector<std::string> dims;
  for (int64_t d : layer.shape) dims.push_back(absl::StrCat(d));
  return Invalid(
      "sparsity.sparsity_loc",
      absl::StrCat("BIMASK's backward mask groups ", nm.m, " output rows and its forward mask ", nm.m,
                   " in-features, but layer ", layer.name, " (", ToString(layer.location), ") is [",
                   absl::StrJoin(dims, ", "), "]: both dimensions must be multiples of ", nm.m));
}

absl::Status ValidateSparsity(const ExperimentConfig& c, const ModelArch& arch) {
  const SparsityConfig& s = c.sparsity;
  if (s.sparsity_type == SparsityType::kSste || s.sparsity_type == SparsityType::kHu24) {
    if (absl::Status st = ValidateTwoFourOnLinears(s, ToString(s.sparsity_type)); !st.ok()) return st;
  }
  if (s.sparsity_type == SparsityType::kStep) {
    if (absl::Status step = ValidateStep(c); !step.ok()) return step;
  }
  if (s.sparsity_type == SparsityType::kBimask) {
    if (absl::Status st = ValidateBimask(s); !st.ok()) return st;
  }
  for (const NM* nm : {&s.nm, &s.nm_qkv}) {
    if (nm->n < 1 || nm->n > nm->m) {
      return Invalid("sparsity", absl::StrCat("N:M ", NMText(*nm), " is invalid: must have 1 <= N <= M"));
    }
  }
  if (!IsNMSparsity(s.sparsity_type)) return absl::OkStatus();
  // The N:M of every stage of a target; SR-STE ignores the structure decay (§2): only its target is used.
  const auto stages_of = [&](const NM& target) {
    return !FollowsStructureDecay(s.sparsity_type)
               ? std::vector<std::pair<int, NM>>{{0, target}}
               : StructureDecayStages(s, SparsityEpochs(c.schedule), target);
  };
  const std::vector<std::pair<int, NM>> main_stages = stages_of(s.nm), qkv_stages = stages_of(s.nm_qkv);
  for (const LayerShape& layer : *LayersAt(c.model, arch, s.locations)) {
    if (s.sparsity_type == SparsityType::kHu24) {
      if (absl::Status st = ValidateHu24Layer(layer); !st.ok()) return st;
    }
    if (s.sparsity_type == SparsityType::kBimask) {
      if (absl::Status st = ValidateBimaskLayer(layer, s.nm); !st.ok()) return st;
    }
    for (const auto& [start, nm] : TargetFor(s, layer.location) == s.nm ? main_stages : qkv_stages) {
      if (layer.numel() % nm.m != 0) {
        std::vector<std::string> dims;
        for (int64_t d : layer.shape) dims.push_back(absl::StrCat(d));
        return Invalid(
            "sparsity",
            absl::StrCat("layer ", layer.name, " (", ToString(layer.location), ", shape [",
                         absl::StrJoin(dims, ", "), "], ", layer.numel(), " weights) cannot use ", NMText(nm),
                         start > 0 ? absl::StrCat(" (structure decay stage from epoch ", start, ")") : "",
                         ": its number of weights is not a multiple of M = ", nm.m));
      }
    }
  }
  return absl::OkStatus();
}

// Dynamic sparsity (§7): every group's filter must take at least one of the model's parameters, as the
// trainer's controller will check on the built model; the catalogue lists the same parameters without
// LibTorch.
absl::Status ValidateDynamicGroups(const ExperimentConfig& c, const ModelArch& arch) {
  if (!c.sparsity.IsDynamic()) return absl::OkStatus();
  // The controller zeroes the pruned weights' moments, which it knows for AdamW (and Adam and SGD) only.
  if (c.optimizer.name != "adamw") {
    return Invalid("optimizer.name", absl::StrCat("value '", c.optimizer.name,
                                                  "' with dynamic sparsity (sparsity.dynamic): only adamw"));
  }
  std::vector<ParamInfo> params;
  for (const ParameterShape& p : ModelParameters(arch)) {
    params.push_back({p.name, static_cast<int64_t>(p.shape.size())});
  }
  return AssignParamGroups(params, c.sparsity.dynamic).status();
}

// The global batch is split evenly over every rank of every node. A single-node spec keeps its old message.
absl::Status CheckBatchOverRanks(const ExperimentConfig& c) {
  const ResourceConfig& r = c.resources;
  if (c.data.batch_size % Ranks(r) == 0) return absl::OkStatus();
  if (r.nodes == 1) {
    return Invalid("data.batch_size",
                   absl::StrCat("value ", c.data.batch_size, " is not divisible by resources.gpus (", r.gpus,
                                "): the global batch is split evenly over ranks"));
  }
  return Invalid("data.batch_size",
                 absl::StrCat("value ", c.data.batch_size,
                              " is not divisible by resources.nodes x resources.gpus (", r.nodes, " x ",
                              r.gpus, " = ", Ranks(r), "): the global batch is split evenly over ranks"));
}

// timm's Mixup: cutmix_minmax is both bounds or neither, and each mixed batch (a rank's batch,
// batch_size / gpus; each micro-batch of grad_accum_steps is one) pairs element i with element B-1-i, so B
// must be even.
absl::Status ValidateMixup(const ExperimentConfig& c) {
  const OptimizerConfig& o = c.optimizer;
  if ((o.cutmix_min > 0.0 || o.cutmix_max > 0.0) && !(o.cutmix_min < o.cutmix_max)) {
    return Invalid("optimizer.cutmix_max", absl::StrCat("value ", yaml_util::FormatDouble(o.cutmix_max),
                                                        " is out of range: must be > optimizer.cutmix_min (",
                                                        yaml_util::FormatDouble(o.cutmix_min), ")"));
  }
  if (!o.MixupActive()) return absl::OkStatus();
  const int local_batch = c.data.batch_size / Ranks(c.resources);
  if (local_batch % 2 != 0) {
    return Invalid(
        "data.batch_size",
        absl::StrCat("value ", c.data.batch_size, " gives each rank batches of ", local_batch, " images (",
                     c.resources.nodes == 1 ? "batch_size / resources.gpus"
                                            : "batch_size / (resources.nodes x resources.gpus)",
                     "), which must be even with Mixup/CutMix "
                     "(timm mixes image i with image B-1-i)"));
  }
  return absl::OkStatus();
}

// The keys of one scheduler that another does not take (timm asserts or ignores them).
absl::Status ValidateLrScheduler(const ScheduleConfig& s) {
  if (s.sched == "warmup_cosine" && s.warmup_prefix) {
    return Invalid("schedule.warmup_prefix",
                   "true needs one of timm's schedulers (schedule.sched): warmup_cosine keeps the warm-up "
                   "inside schedule.epochs");
  }
  if ((s.sched == "warmup_cosine" || s.sched == "plateau") && s.sched_on_updates) {
    return Invalid("schedule.sched_on_updates",
                   absl::StrCat("true is not possible with schedule.sched ", s.sched,
                                s.sched == "plateau" ? ", which steps per epoch on the evaluation's top-1"
                                                     : ", which always steps per update"));
  }
  if (s.sched == "multistep" && s.decay_milestones.empty()) {
    return Invalid("schedule.decay_milestones", "missing: multistep decays at these epochs");
  }
  for (size_t i = 1; i < s.decay_milestones.size(); ++i) {
    if (s.decay_milestones[i] <= s.decay_milestones[i - 1]) {
      return Invalid("schedule.decay_milestones",
                     absl::StrCat("value ", s.decay_milestones[i], " at [", i,
                                  "] is not greater than the one before: milestones are ascending"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateExperiment(const ExperimentConfig& c) {
  if (c.model.name.empty()) return Invalid("model.name", "missing: every experiment names a model");
  auto arch = ResolveModel(c.model);
  if (!arch.ok()) return Invalid("model.name", std::string(arch.status().message()));
  if (auto st = ValidateModelAndData(c, *arch); !st.ok()) return st;
  if (auto st = ValidateInitialWeightsDigest(c.model); !st.ok()) return st;
  if (auto st = CheckBatchOverRanks(c); !st.ok()) return st;
  if (auto st = CheckEpochHasSteps(c); !st.ok()) return st;
  if (auto st = ValidateMixup(c); !st.ok()) return st;
  if (c.schedule.warmup_epochs > c.schedule.epochs) {
    return Invalid("schedule.warmup_epochs",
                   absl::StrCat("value ", yaml_util::FormatDouble(c.schedule.warmup_epochs),
                                " is out of range: must be <= schedule.epochs (", c.schedule.epochs, ")"));
  }
  if (auto st = ValidateLrScheduler(c.schedule); !st.ok()) return st;
  if (auto st = ValidateDynamicGroups(c, *arch); !st.ok()) return st;
  if (auto st = ValidateSparsity(c, *arch); !st.ok()) return st;
  return ChooseSemiStructuredLayers(c.semi_structured, c.sparsity, *arch).status();
}

}  // namespace nmsparse
