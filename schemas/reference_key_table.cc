#include "schemas/reference_key_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

using Use = ReferenceKeyUse;

UnmappedReferenceKey Harmless(std::string key, std::string why) {
  return {std::move(key), Use::kHarmless, "", std::move(why)};
}

UnmappedReferenceKey Unimplemented(std::string key, std::string timm_default, std::string why) {
  return {std::move(key), Use::kUnimplemented, std::move(timm_default), std::move(why)};
}

// timm's defaults are train.py's argparse defaults (timm 0.9-1.0, the reference's version).
std::vector<UnmappedReferenceKey> Table() {
  const std::string kNoBatchNorm = "BatchNorm statistics only: the catalogued models have no BatchNorm";
  const std::string kCompile = "compiles the same model";
  const std::string kLoader = "loader speed only";
  std::vector<UnmappedReferenceKey> keys = {
      Unimplemented("amp_impl", "native", "apex's mixed precision has other numerics"),
      Harmless("aot_autograd", kCompile),
      Unimplemented("aug_splits", "0", "AugMix splits of each batch"),
      Unimplemented("bn_eps", "~", "BatchNorm epsilon (timm refuses it for models without BatchNorm)"),
      Unimplemented("bn_momentum", "~", "BatchNorm momentum (timm refuses it for models without BatchNorm)"),
      Harmless("channels_last", "memory layout only"),
      Harmless("checkpoint_freq_epoch", "checkpoint bookkeeping"),
      Harmless("checkpoint_hist", "checkpoint bookkeeping"),
      Unimplemented("class_map", "''", "relabels the classes"),
      Unimplemented("data", "~", "the deprecated positional data path: use data_dir"),
      Harmless("dataset_download", "fetches the dataset, which is not what is trained"),
      Harmless("device", "where it runs"),
      Harmless("dist_bn", kNoBatchNorm),
      Unimplemented("drop_block", "~", "DropBlock regularisation"),
      Unimplemented("drop_connect", "~", "drop-path rate under its deprecated name: use drop_path"),
      Unimplemented("epoch_repeats", "0", "the length of an epoch"),
      Unimplemented("eval_metric", "top1", "the metric of the plateau scheduler and of the best checkpoint"),
      Unimplemented("fast_norm", "false", "normalisation in reduced precision"),
      Harmless("force_cpu", "where it runs"),
      Harmless("fuser", kCompile),
      Harmless("grad_checkpointing", "recomputes activations; the gradients are the same"),
      Unimplemented("jsd_loss", "false", "the Jensen-Shannon loss over augmentation splits"),
      Harmless("local_rank", "set by the launcher"),
      Harmless("log_wandb", "logging only"),
      Unimplemented("lr_noise", "~", "noise on the learning rate"),
      Harmless("lr_noise_pct", "read only with lr_noise, which must be null"),
      Harmless("lr_noise_std", "read only with lr_noise, which must be null"),
      Harmless("model_ema_force_cpu", "where the EMA is kept, not what it computes"),
      Harmless("momentum", "read by SGD-family optimizers only, and opt must be adamw"),
      Unimplemented("no_aug", "false", "turns off every training augmentation"),
      Harmless("no_ddp_bb", kNoBatchNorm),
      Harmless("no_prefetcher", "where normalisation runs, not what it computes"),
      Harmless("no_resume_opt", "read only with resume, which must be empty"),
      Harmless("output", "output directory"),
      Harmless("pin_mem", kLoader),
      Harmless("recovery_interval", "checkpoint bookkeeping"),
      Harmless("resplit", "read only with aug_splits, which must be 0"),
      Unimplemented("resume", "''", "starts from a checkpoint: nmsparse resumes its own runs"),
      Harmless("save_images", "debugging output"),
      Unimplemented("split_bn", "false", "BatchNorm per augmentation split"),
      Unimplemented("start_epoch", "~", "skips epochs of the schedule"),
      Harmless("sync_bn", kNoBatchNorm),
      Harmless("torchcompile", kCompile),
      Harmless("torchscript", kCompile),
      Unimplemented("train_split", "train", "which data is trained on"),
      Unimplemented("tta", "0", "test-time augmentation of the evaluation"),
      Harmless("use_multi_epochs_loader", kLoader),
      Unimplemented("val_split", "validation", "which data is evaluated on"),
      Harmless("worker_seeding", "which seed each loader worker gets, not the augmentations' distribution"),
  };
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return keys;
}

std::string UseText(const UnmappedReferenceKey& k) {
  const std::string accepted =
      k.timm_default == "~" ? "null" : absl::StrCat("`", k.timm_default, "` or null");
  switch (k.use) {
    case Use::kHarmless:
      return "any value";
    case Use::kUnimplemented:
      return accepted + " only (else an error)";
  }
  return "";
}

}  // namespace

const std::vector<UnmappedReferenceKey>& UnmappedReferenceKeys() {
  static const auto* keys = new std::vector<UnmappedReferenceKey>(Table());
  return *keys;
}

const UnmappedReferenceKey* FindUnmappedReferenceKey(const std::string& key) {
  const auto& keys = UnmappedReferenceKeys();
  auto it =
      std::lower_bound(keys.begin(), keys.end(), key,
                       [](const UnmappedReferenceKey& k, const std::string& name) { return k.key < name; });
  return it != keys.end() && it->key == key ? &*it : nullptr;
}

std::string UnmappedReferenceKeysMarkdown() {
  std::string out = "| reference key | accepted | why |\n| --- | --- | --- |\n";
  for (const UnmappedReferenceKey& k : UnmappedReferenceKeys()) {
    absl::StrAppend(&out, "| `", k.key, "` | ", UseText(k), " | ", k.why, " |\n");
  }
  return out;
}

}  // namespace nmsparse
