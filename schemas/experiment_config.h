// An experiment spec: the declarative description of one training run, its YAML keys declared once in the
// key tables (ExperimentKeys); its canonical YAML is how it travels and is stored. Plain C++ (no LibTorch, no
// protobuf): nmtrain reads it, nmserver and nmctl validate and hash it. Flat timm train.py configs of the
// paper's reference code are accepted too (schemas/reference_config.h).
#ifndef NMSPARSE_SCHEMAS_EXPERIMENT_CONFIG_H_
#define NMSPARSE_SCHEMAS_EXPERIMENT_CONFIG_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schemas/semi_structured_config.h"
#include "schemas/sparsity_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

template <typename S>
class KeyTable;

struct ModelConfig {
  std::string name;     // A catalogued model (schemas/model_catalog.h); required.
  int num_classes = 0;  // 0: the model's own.
  int img_size = 0;     // 0: the model's own.
  int in_chans = 0;     // 0: the model's own.
  // timm's model_kwargs overriding the catalogue entry; 0, empty or unset: the entry's own value.
  int patch_size = 0;
  int embed_dim = 0;           // ViT width; SwinV2 width of the first stage.
  int depth = 0;               // ViT only.
  std::vector<int> depths;     // SwinV2 only, one per stage.
  std::vector<int> num_heads;  // ViT: one number; SwinV2: one per stage.
  double mlp_ratio = 0.0;
  std::optional<bool> qkv_bias;
  std::optional<bool> class_token;           // ViT only.
  std::string global_pool;                   // ViT: "token" (needs the class token) or "avg" (needs none).
  int window_size = 0;                       // SwinV2 only.
  std::vector<int> pretrained_window_sizes;  // SwinV2 only, one per stage (0: none).
  double drop_rate = 0.0;
  double drop_path_rate = 0.0;
  double attn_drop_rate = 0.0;
  // timm's ModelEmaV2 (worker/trainer/model_ema.h): an exponential moving average of the dense weights, also
  // evaluated after every epoch.
  bool ema = false;
  double ema_decay = 0.9998;
  // The weights to start from instead of random ones (docs/interop.md): a safetensors file, or a timm /
  // Hugging Face folder holding model.safetensors; timm's initial_checkpoint. Empty: random.
  std::string initial_checkpoint;
  // The weights file's SHA-256 (lowercase hex): its content in the run's content hash, checked by nmtrain.
  std::string initial_checkpoint_sha256;
};

struct DataConfig {
  std::string dataset =
      "fashion_mnist";   // fashion_mnist | synthetic | shards | imagefolder | packed | cifar10 | cifar100.
  std::string path;      // Empty: the dataset's default location.
  int train_subset = 0;  // First N training images (0: all).
  int eval_subset = 0;   // First N evaluation images (0: all).
  int batch_size = 128;  // Global, split evenly over ranks.
  int eval_batch_size = 256;
  int random_crop_padding = 0;  // 0: off.
  double hflip = 0.0;           // Probability.
  int synthetic_size = 1024;    // Images of the synthetic dataset.
  int aug_repeats = 0;          // timm's RepeatAugSampler: each image this many times an epoch (0: off).
  // timm's transforms (create_transform; docs/data-format.md), by train.py's defaults.
  std::string auto_augment;  // timm's aa: "" (none) or rand-m{M}-n{N}-... (schemas/rand_augment_config.h).
  std::vector<double> crop_scale = {0.08, 1.0};             // RandomResizedCrop area fraction range.
  std::vector<double> crop_ratio = {3.0 / 4.0, 4.0 / 3.0};  // RandomResizedCrop aspect range.
  std::string train_interpolation = "random";               // random, bilinear, bicubic or nearest.
  double vflip = 0.0;                                       // Vertical flip probability.
  double color_jitter = 0.4;                                // Used only without auto_augment.
  double re_prob = 0.0;                                     // Random erasing probability.
  std::string re_mode = "pixel";                            // const, rand or pixel.
  int re_count = 1;                                         // Up to this many erased boxes.
  double crop_pct = 0.0;                                    // Evaluation crop fraction (0: the model's).
  std::string interpolation;                                // Evaluation filter ("": the model's).
  std::vector<double> mean;                                 // Per channel (empty: the model's).
  std::vector<double> std;                                  // Per channel (empty: the model's).
  int workers = 0;                                          // Loader threads (0: the trainer's default).
};

// Whether `dataset` holds stored images of any size (imagefolder, packed, cifar10, cifar100), read through
// timm's transforms (schemas/data_pipeline.h) rather than as fixed-size pixels.
inline bool IsStoredImageDataset(const std::string& dataset) {
  return dataset == "imagefolder" || dataset == "packed" || dataset == "cifar10" || dataset == "cifar100";
}

struct OptimizerConfig {
  std::string name = "adamw";
  double lr = 1e-3;
  double weight_decay = 0.05;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double clip_grad_norm = 0.0;  // 0: no clipping.
  double label_smoothing = 0.0;
  double mixup_alpha = 0.0;  // 0: no mixup.
  // timm's Mixup/CutMix and its loss choice (worker/trainer/loss/mixup.h, loss.h; docs/nmtrain.md).
  double cutmix_alpha = 0.0;  // 0: no CutMix (unless cutmix_min/max are set).
  double cutmix_min = 0.0;    // cutmix_min < cutmix_max: box sides drawn in [min, max) of the image's.
  double cutmix_max = 0.0;
  double mixup_prob = 1.0;           // Probability of mixing a batch (or element).
  double mixup_switch_prob = 0.5;    // Probability of CutMix rather than Mixup when both are active.
  std::string mixup_mode = "batch";  // batch, pair or elem.
  int mixup_off_epoch = 0;           // Mixing stops at this epoch (0: never).
  bool bce_loss = false;             // Binary cross-entropy instead of softmax cross-entropy.
  double bce_target_thresh = 0.0;    // > 0: BCE targets binarized at this threshold.
  bool bce_sum = false;              // BCE summed over the classes, then averaged over the batch.
  double layer_decay = 0.0;          // > 0: timm's layer-wise lr decay (lr_scale per layer); 0: off.
  // Mixup or CutMix is configured (timm's mixup_active).
  bool MixupActive() const { return mixup_alpha > 0.0 || cutmix_alpha > 0.0 || cutmix_max > 0.0; }
  int grad_accum_steps = 1;
};

struct ScheduleConfig {
  int epochs = 1;
  double warmup_epochs = 0.0;  // Linear warm-up, counted in optimizer steps.
  double min_lr = 1e-6;        // Cosine decay floor.
  double warmup_lr = 1e-6;
  int log_every_steps = 0;           // 0: every total_steps / log_points steps.
  int log_points = 25;               // Step lines over a run when log_every_steps is 0 (0: per epoch only).
  bool sparsity_diagnostics = true;  // Flip rates and pruned / kept gradient norms at log points.
  // timm's schedulers (worker/trainer/scheduler/lr_scheduler.h; create_scheduler_v2's arguments by train.py's
  // names). warmup_cosine: nmsparse's own cosine (per update, the warm-up inside `epochs`).
  std::string sched = "warmup_cosine";
  int cooldown_epochs = 0;
  bool warmup_prefix = false;
  bool sched_on_updates = false;
  double lr_k_decay = 1.0;
  double lr_cycle_mul = 1.0;
  double lr_cycle_decay = 0.5;
  int lr_cycle_limit = 1;
  double decay_epochs = 90.0;
  std::vector<int> decay_milestones;  // multistep: required (train.py defaults to 90, 180, 270).

  double decay_rate = 0.1;
  int patience_epochs = 10;

  // The steps between step lines of a run of `total_steps` optimizer steps (0: none): log_every_steps when
  // set, else an interval that gives log_points lines or more, so that a curve has tens of points by default.
  int64_t LogEverySteps(int64_t total_steps) const {
    if (log_every_steps > 0) return log_every_steps;
    if (log_points <= 0 || total_steps <= 0) return 0;
    return std::max<int64_t>(1, total_steps / log_points);
  }
};

struct ResourceConfig {
  // Nodes (workers) the run spans, each with `gpus` ranks: nodes x gpus ranks in all. Canonical YAML writes
  // it only when not 1, so single-node runs keep their hashes.
  int nodes = 1;
  int gpus = 1;         // Ranks on each node; on a CPU worker, CPU slots.
  int cpu_threads = 1;  // Intra-op threads per rank.
  // Arithmetic of the forward passes: fp32, or bf16 (bfloat16 autocast; weights, optimizer state and loss
  // stay fp32; docs/nmtrain.md). Canonical lower case; the canonical YAML writes it only when not fp32.
  std::string precision = "fp32";
};

// Every rank of a run: nodes x gpus.
inline int Ranks(const ResourceConfig& r) { return r.nodes * r.gpus; }

struct ExperimentConfig {
  std::string name;
  uint64_t seed = 0;
  ModelConfig model;
  DataConfig data;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  ResourceConfig resources;
  SparsityConfig sparsity;
  // Accelerated 2:4 linears (schemas/semi_structured_config.h). Canonical YAML and hash only when enabled.
  SemiStructuredConfig semi_structured;
};

bool operator==(const ExperimentConfig& a, const ExperimentConfig& b);
inline bool operator!=(const ExperimentConfig& a, const ExperimentConfig& b) { return !(a == b); }

// Parses an experiment spec map (or a flat reference config, detected by a scalar top-level `model`). Errors
// are InvalidArgument "FILE:LINE: key.path: reason" (just "key.path: reason" for nodes without a source
// position). Warnings (reference keys that are accepted but ignored) are appended to `warnings` when it is
// non-null.
absl::StatusOr<ExperimentConfig> ParseExperimentNode(const YAML::Node& node, const std::string& file_name,
                                                     std::vector<std::string>* warnings = nullptr);
absl::StatusOr<ExperimentConfig> ParseExperimentYaml(const std::string& text, const std::string& file_name,
                                                     std::vector<std::string>* warnings = nullptr);
absl::StatusOr<ExperimentConfig> LoadExperimentFile(const std::string& path,
                                                    std::vector<std::string>* warnings = nullptr);

// Parses top-level key `key_node` of a nested spec (name, seed, model, ..., sparsity) into `config`,
// replacing what `config` had for it: ParseExperimentNode of a map is these calls in key order on a default
// config, so a config parsed once can take a few re-parsed keys. Errors as ParseExperimentNode's (without a
// file name).
absl::Status ParseExperimentKey(const YAML::Node& key_node, const YAML::Node& value,
                                ExperimentConfig* config);

// Semantic checks beyond single keys: the model exists and fits the data, every sparsified layer's numel is a
// multiple of M for every N:M it will ever use (all SDGF stages), batch divisible by gpus, warm-up within the
// run, ... InvalidArgument "key.path: reason".
absl::Status ValidateExperiment(const ExperimentConfig& config);

// Canonical YAML: every key with defaults filled in, in the key table's order, enum values in their table's
// spelling, numbers in their shortest exact form. Parses back to an equal config; its text is what
// ContentHash hashes. Keys added after run hashes were first stored (resources.precision) are written only
// when they differ from their default, the model's model_kwargs only when they differ from the catalogue
// entry's own value, and semi_structured only when it chooses a layer, so the canonical text and hash of
// every run that predates them stay as they were. ExperimentConfigToYaml is the same as YAML nodes.
std::string CanonicalYaml(const ExperimentConfig& config);
YAML::Node ExperimentConfigToYaml(const ExperimentConfig& config);

// The keys of an experiment spec (schemas/spec_keys.h): name, seed and the sections, each with its keys.
const KeyTable<ExperimentConfig>& ExperimentKeys();

// The top-level keys of an experiment spec ("") and the keys of each section, in canonical order (for
// overrides and error messages).
const std::vector<std::string>& ExperimentSectionKeys(const std::string& section);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_EXPERIMENT_CONFIG_H_
