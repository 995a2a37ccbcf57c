// Flat timm train.py configs, as the paper's reference code uses them (e.g. its vit_base_training.yaml):
// every argument of train.py at top level, `model` a scalar, the sparsity keys beside them. They load
// unchanged: keys nmsparse implements are mapped onto an ExperimentConfig; the other timm keys are
// accepted with any value when they cannot change the training's mathematics, and otherwise only at timm's
// default (schemas/reference_key_table.h: an error names the key and value);
// any other key is an error.
#ifndef NMSPARSE_SCHEMAS_REFERENCE_CONFIG_H_
#define NMSPARSE_SCHEMAS_REFERENCE_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// True when `node` is a map whose `model` is a scalar (the nested form has a `model:` map).
bool IsFlatReferenceConfig(const YAML::Node& node);

// Maps a flat reference config. Errors "line L: key: reason" name the flat key. The one warning says where a
// `dataset` other than fashion_mnist or synthetic is read from. The mapping:
//   model -> model.name; gp (token or avg) -> model.global_pool; num_classes, img_size, in_chans (null: the
//   model's own); drop -> model.drop_rate; drop_path -> model.drop_path_rate; batch_size -> data.batch_size
//   (timm's per-process batch, read as the global batch of a 1-rank run); validation_batch_size ->
//   data.eval_batch_size; hflip -> data.hflip; data_dir -> data.path; dataset -> data.dataset (fashion_mnist
//   / synthetic as such, anything else, e.g. torch/imagenet-1k, is read as nmsparse shards at data_dir, with
//   a warning); opt (adamw or lion; lion without opt_betas takes timm's Lion betas 0.9, 0.99); opt_eps,
//   opt_betas, weight_decay, clip_grad (clip_mode norm only), smoothing, mixup, cutmix, cutmix_minmax (->
//   cutmix_min, cutmix_max), mixup_prob, mixup_switch_prob, mixup_mode, mixup_off_epoch, bce_loss,
//   bce_target_thresh, bce_sum -> optimizer; lr, or when lr is null lr_base * ratio with ratio = batch_size *
//   grad_accum_steps / lr_base_size, square-rooted when lr_base_scale is sqrt (timm's default for adaptive
//   optimizers such as adamw) -> optimizer.lr; epochs, warmup_epochs, warmup_lr, min_lr, log_interval ->
//   schedule; seed; experiment -> name; sparsity keys (§6)
//   -> sparsity; amp with amp_dtype bfloat16 -> resources.precision bf16, with float16 (train.py's default
//   dtype) -> fp16 (autocast with GradScaler loss scaling); layer_decay -> optimizer; aug_repeats ->
//   data.aug_repeats; model_ema, model_ema_decay -> model; timm's transform keys -> data
//   (docs/data-format.md).
absl::StatusOr<ExperimentConfig> ParseReferenceConfig(const YAML::Node& node,
                                                      std::vector<std::string>* warnings);

// True for the train.py keys the mapping accepts (mapped or ignored).
bool IsReferenceKey(const std::string& key);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_REFERENCE_CONFIG_H_
