// The key tables of an experiment spec: name, seed, the model, data, optimizer, schedule and resources
// sections, and the sparsity and semi_structured sections (whose keys are in sparsity_config.cc and
// semi_structured_config.cc). Aliases are the flat timm train.py keys of the paper's reference configs
// (schemas/reference_config.h): a key it maps one to one, or one it reads by hand (model, dataset, opt,
// opt_betas, lr, amp); "model_kwargs.K" is key K of train.py's model_kwargs map.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "schemas/experiment_config.h"
#include "schemas/limits.h"
#include "schemas/model_catalog.h"
#include "schemas/rand_augment_config.h"
#include "schemas/spec_key_builders.h"

namespace nmsparse {
namespace {

// A model's name, checked where it is written (the line, "did you mean"); a timm alias is read as the
// catalogue entry it names, so both spellings are one run with one content hash.
absl::StatusOr<std::string> ReadModelName(const YAML::Node& value, const std::string& path) {
  absl::StatusOr<std::string> name = ReadSpecString(value, path);
  if (!name.ok() || name->empty()) return name;
  const std::string entry = CatalogName(*name);
  if (!entry.empty()) return entry;
  return yaml_util::Error(value, path, std::string(LookupModel(*name).status().message()));
}

using E = ExperimentConfig;
using M = ModelConfig;
using D = DataConfig;
using O = OptimizerConfig;
using Sc = ScheduleConfig;
using R = ResourceConfig;

constexpr bool kOpen = true;
constexpr double kInf = std::numeric_limits<double>::infinity();

// --- model_kwargs: timm's constructor arguments overriding the catalogue entry ---

template <int kMin>
absl::StatusOr<int> ReadAtLeast(const YAML::Node& value, const std::string& path) {
  auto v = yaml_util::ReadInt(value, path, kMin, std::numeric_limits<int32_t>::max());
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

// One integer of at least kMin, or a list of them (a number reads as a list of one).
template <int kMin>
absl::StatusOr<std::vector<int>> ReadIntegersAtLeast(const YAML::Node& value, const std::string& path) {
  if (!value.IsSequence()) {
    auto one = ReadAtLeast<kMin>(value, path);
    if (!one.ok()) return one.status();
    return std::vector<int>{*one};
  }
  auto list =
      ReadList<int>(value, path, kMin > 0 ? "positive integers" : "non-negative integers", ReadAtLeast<kMin>);
  if (list.ok() && list->empty()) return yaml_util::Error(value, path, "an empty list gives no value");
  return list;
}

absl::StatusOr<std::vector<int>> ReadIntegers(const YAML::Node& value, const std::string& path) {
  return ReadIntegersAtLeast<1>(value, path);
}

// Always a flow list, one number included ("num_heads: [4]"), so that both spellings write alike.
void WriteIntegers(const std::vector<int>& values, const KeyInfo& self, SpecWriter* out) {
  if (values.empty()) return;
  YAML::Node list(YAML::NodeType::Sequence);
  for (int v : values) list.push_back(v);
  list.SetStyle(YAML::EmitterStyle::Flow);
  out->Collection(self, list);
}

// A boolean that is unset unless given (its default is the model's own).
SpecKey<M> OptionalBoolKey(const std::string& name, std::optional<bool> M::*member) {
  SpecKey<M> key =
      spec_keys_internal::ValueKey<M, std::optional<bool>>(name, KeyKind::kBoolean, MakeRef(member));
  key.read = [member](const YAML::Node& value, const std::string& path, M* m) -> absl::Status {
    absl::StatusOr<bool> b = yaml_util::ReadBool(value, path);
    if (!b.ok()) return b.status();
    m->*member = *b;
    return absl::OkStatus();
  };
  key.write = [member](const M& m, const KeyInfo& self, SpecWriter* out) {
    if ((m.*member).has_value()) out->Scalar(self, *(m.*member));
  };
  return key;
}

// A model_kwargs key: unset (0, empty) means the catalogue entry's own value, and so does a value equal to
// it: such a key is left out of the canonical form and compares equal to its absence, so that two specs
// that build the same model hash alike, and specs written before these keys keep their text.
SpecKey<M> ModelKwarg(SpecKey<M> key, bool (*is_own)(const M& m, const ModelArch& entry)) {
  key.info.omitted_at_default = true;
  key.info.default_text.clear();
  key.info.validated = true;
  auto equal = key.equal;
  auto write = key.write;
  auto at_own = [equal, is_own](const M& m) {
    static const M unset{};
    if (equal(m, unset)) return true;
    const ModelArch* entry = FindModel(m.name);
    return entry != nullptr && is_own(m, *entry);
  };
  key.write = [write, at_own](const M& m, const KeyInfo& self, SpecWriter* out) {
    if (!at_own(m)) write(m, self, out);
  };
  key.equal = [equal, at_own](const M& a, const M& b) { return equal(a, b) || (at_own(a) && at_own(b)); };
  return key;
}

std::vector<int> OwnHeads(const ModelArch& a) {
  return a.family == ModelFamily::kVit ? std::vector<int>{a.num_heads} : a.stage_heads;
}

// timm's pretrained_window_sizes: all zeros (timm's default) is the same as none.
std::vector<int> PretrainedWindows(const std::vector<int>& sizes) {
  for (int s : sizes) {
    if (s != 0) return sizes;
  }
  return {};
}

std::string OwnPool(const M& m, const ModelArch& a) {
  return a.family == ModelFamily::kVit && m.class_token.value_or(a.class_token) ? "token" : "avg";
}

std::vector<SpecKey<M>> ModelKwargKeys() {
  std::vector<SpecKey<M>> keys;
  keys.push_back(ModelKwarg(IntKey<M>("patch_size", &M::patch_size, 0)
                                .Doc("Patch (stem) size; img_size must be a multiple of it.")
                                .Alias("model_kwargs.patch_size"),
                            [](const M& m, const ModelArch& a) { return m.patch_size == a.patch_size; }));
  keys.push_back(ModelKwarg(IntKey<M>("embed_dim", &M::embed_dim, 0)
                                .Doc("Width (SwinV2: of the first stage, doubling per stage); a multiple of "
                                     "num_heads.")
                                .Alias("model_kwargs.embed_dim"),
                            [](const M& m, const ModelArch& a) { return m.embed_dim == a.embed_dim; }));
  keys.push_back(
      ModelKwarg(IntKey<M>("depth", &M::depth, 0).Doc("ViT: number of blocks.").Alias("model_kwargs.depth"),
                 [](const M& m, const ModelArch& a) { return m.depth == a.depth; }));
  keys.push_back(ModelKwarg(
      MemberKey<M, std::vector<int>>("depths", KeyKind::kIntegers, &M::depths, ReadIntegers, WriteIntegers)
          .Doc("SwinV2: blocks per stage, e.g. [2, 2, 6, 2].")
          .Alias("model_kwargs.depths"),
      [](const M& m, const ModelArch& a) { return m.depths == a.depths; }));
  keys.push_back(ModelKwarg(MemberKey<M, std::vector<int>>("num_heads", KeyKind::kIntegers, &M::num_heads,
                                                           ReadIntegers, WriteIntegers)
                                .Doc("Attention heads: ViT one number, SwinV2 one per stage (as in timm). "
                                     "Written as a list.")
                                .Alias("model_kwargs.num_heads"),
                            [](const M& m, const ModelArch& a) { return m.num_heads == OwnHeads(a); }));
  keys.push_back(ModelKwarg(NumberKey<M>("mlp_ratio", &M::mlp_ratio, 0.0)
                                .Doc("MLP hidden width over the block width.")
                                .Alias("model_kwargs.mlp_ratio"),
                            [](const M& m, const ModelArch& a) { return m.mlp_ratio == a.mlp_ratio; }));
  keys.push_back(ModelKwarg(OptionalBoolKey("qkv_bias", &M::qkv_bias)
                                .Doc("Bias of the qkv projection (SwinV2: q_bias and v_bias).")
                                .Alias("model_kwargs.qkv_bias"),
                            [](const M& m, const ModelArch& a) { return *m.qkv_bias == a.qkv_bias; }));
  keys.push_back(ModelKwarg(OptionalBoolKey("class_token", &M::class_token)
                                .Doc("ViT: a class token (pooled by \"token\"); false pools by \"avg\".")
                                .Alias("model_kwargs.class_token"),
                            [](const M& m, const ModelArch& a) { return *m.class_token == a.class_token; }));
  keys.push_back(ModelKwarg(WordKey<M>("global_pool", &M::global_pool, {"token", "avg"})
                                .Doc("ViT: token (needs class_token) or avg (needs class_token: false).")
                                .Alias("model_kwargs.global_pool"),
                            [](const M& m, const ModelArch& a) { return m.global_pool == OwnPool(m, a); }));
  keys.push_back(ModelKwarg(IntKey<M>("window_size", &M::window_size, 0)
                                .Doc("SwinV2: attention window; clamped to a stage's resolution when larger.")
                                .Alias("model_kwargs.window_size"),
                            [](const M& m, const ModelArch& a) { return m.window_size == a.window_size; }));
  keys.push_back(ModelKwarg(
      MemberKey<M, std::vector<int>>("pretrained_window_sizes", KeyKind::kIntegers,
                                     &M::pretrained_window_sizes, ReadIntegersAtLeast<0>, WriteIntegers)
          .Doc("SwinV2: per stage, the window the weights were pre-trained with, which scales the position "
               "bias's relative coordinates in place of window_size (timm's window12to16 / 12to24 "
               "fine-tunes; 0: none).")
          .Alias("model_kwargs.pretrained_window_sizes"),
      [](const M& m, const ModelArch& a) {
        return PretrainedWindows(m.pretrained_window_sizes) == PretrainedWindows(a.pretrained_window_sizes);
      }));
  return keys;
}

// A SHA-256 digest as sha256sum prints it (64 hex digits, either case), kept in lower case.
absl::StatusOr<std::string> ReadSha256(const YAML::Node& value, const std::string& path) {
  absl::StatusOr<std::string> text = ReadSpecString(value, path);
  if (!text.ok()) return text.status();
  const bool hex = std::all_of(text->begin(), text->end(), [](char c) { return absl::ascii_isxdigit(c); });
  if (!text->empty() && (text->size() != 64 || !hex)) {
    return yaml_util::Error(value, path, "value '" + *text + "' is not a SHA-256 digest (64 hex digits)");
  }
  return absl::AsciiStrToLower(*text);
}

const KeyTable<ModelConfig>& ModelKeys() {
  static const auto* keys = new KeyTable<M>([] {
    std::vector<SpecKey<M>> keys = {
        [] {
          SpecKey<M> name =
              spec_keys_internal::ScalarKey<M, std::string>("name", KeyKind::kString, MakeRef(&M::name),
                                                            ReadModelName)
                  .Doc("A catalogued model, or a timm alias of one (read as the catalogue's name).")
                  .Alias("model")
                  .Validated();
          name.info.names = AcceptedModelNames();
          return std::move(name).Required();
        }(),
        IntKey<M>("num_classes", &M::num_classes, 0)
            .Doc("Classes (0: the model's own).")
            .Alias("num_classes")
            .Validated(),
        IntKey<M>("img_size", &M::img_size, 0)
            .Doc("Input size (0: the model's own); a multiple of the patch size.")
            .Alias("img_size")
            .Validated(),
        IntKey<M>("in_chans", &M::in_chans, 0)
            .Doc("Input channels (0: the model's own).")
            .Alias("in_chans")
            .Validated(),
        NumberKey<M>("drop_rate", &M::drop_rate, 0.0, 1.0, kOpen)
            .Doc("Dropout before the head.")
            .Alias("drop"),
        NumberKey<M>("drop_path_rate", &M::drop_path_rate, 0.0, 1.0, kOpen)
            .Doc("Stochastic depth rate.")
            .Alias("drop_path"),
        NumberKey<M>("attn_drop_rate", &M::attn_drop_rate, 0.0, 1.0, kOpen).Doc("Attention dropout."),
        OmittedAtDefault(BoolKey<M>("ema", &M::ema)
                             .Doc("Keep timm's ModelEmaV2 of the dense weights and evaluate it too (ema_* "
                                  "metrics).")
                             .Alias("model_ema")),
        OmittedAtDefault(NumberKey<M>("ema_decay", &M::ema_decay, 0.0, 1.0)
                             .Doc("EMA decay: ema = decay * ema + (1 - decay) * weight after every step.")
                             .Alias("model_ema_decay")),
        OmittedAtDefault(
            StringKey<M>("initial_checkpoint", &M::initial_checkpoint)
                .Doc("Start from these weights instead of random ones: a safetensors file, or a "
                     "timm / Hugging Face folder with model.safetensors (docs/interop.md). timm's "
                     "initial_checkpoint, also with pretrained: true.")
                .Alias("initial_checkpoint")),
        OmittedAtDefault(
            spec_keys_internal::ScalarKey<M, std::string>("initial_checkpoint_sha256", KeyKind::kString,
                                                          MakeRef(&M::initial_checkpoint_sha256), ReadSha256)
                .Doc("The SHA-256 of the initial_checkpoint file (a folder's model.safetensors), 64 hex "
                     "digits: the file's content in the run's content hash; nmtrain refuses a file that "
                     "differs. nmctl fills it in where it can read the file (sha256sum FILE).")
                .Alias("initial_checkpoint_sha256")),
    };
    for (SpecKey<M>& key : ModelKwargKeys()) keys.push_back(std::move(key));
    return keys;
  }());
  return *keys;
}

// timm's aa string, its grammar checked where it is read.
SpecKey<D> AutoAugmentKey() {
  SpecKey<D> key = StringKey<D>("auto_augment", &D::auto_augment);
  key.read = [](const YAML::Node& value, const std::string& path, D* d) -> absl::Status {
    absl::StatusOr<std::string> text = yaml_util::ReadString(value, path);
    if (!text.ok()) return text.status();
    if (!text->empty()) {
      if (absl::Status st = ParseRandAugmentConfig(*text).status(); !st.ok()) {
        return yaml_util::Error(value, path, std::string(st.message()));
      }
    }
    d->auto_augment = *text;
    return absl::OkStatus();
  };
  return key;
}

const KeyTable<DataConfig>& DataKeys() {
  static const auto* keys = new KeyTable<D>({
      WordKey<D>("dataset", &D::dataset,
                 {"fashion_mnist", "synthetic", "shards", "imagefolder", "packed", "cifar10", "cifar100"})
          .Doc("fashion_mnist (28x28x1, 10 classes), synthetic (random images of the model's shape), shards "
               "(nmsparse's uint8 shard format at path), imagefolder (path/{train,val}/<class>/*.JPEG), "
               "packed "
               "(nmshard's packed JPEG shards path/{train,val}-*.nmjpeg), cifar10 / cifar100 (their binary "
               "distribution at path; docs/data-format.md). Case-insensitive; canonical form lower case.")
          .Alias("dataset")
          .Validated(),
      StringKey<D>("path", &D::path)
          .Doc("Directory of the dataset; empty: the default location (required for shards).")
          .Alias("data_dir")
          .Validated(),
      IntKey<D>("train_subset", &D::train_subset, 0)
          .Doc("Use only the first N training images (0: all).")
          .Validated(),
      IntKey<D>("eval_subset", &D::eval_subset, 0).Doc("Use only the first N evaluation images (0: all)."),
      IntKey<D>("batch_size", &D::batch_size, 1)
          .Doc("Global batch size, split evenly over resources.nodes x resources.gpus ranks.")
          .Alias("batch_size")
          .Validated(),
      IntKey<D>("eval_batch_size", &D::eval_batch_size, 1)
          .Doc("Evaluation batch size.")
          .Alias("validation_batch_size"),
      IntKey<D>("random_crop_padding", &D::random_crop_padding, 0)
          .Doc("Pad-and-crop augmentation padding (0: off)."),
      NumberKey<D>("hflip", &D::hflip, 0.0, 1.0).Doc("Horizontal flip probability.").Alias("hflip"),
      IntKey<D>("synthetic_size", &D::synthetic_size, 1).Doc("Images of the synthetic dataset.").Validated(),
      OmittedAtDefault(
          IntKey<D>("workers", &D::workers, 0, limits::kMaxLoaderThreads)
              .Doc("Loader threads building batches ahead of the step (0: the trainer's default).")
              .Alias("workers")),
      OmittedAtDefault(
          IntKey<D>("aug_repeats", &D::aug_repeats, 0)
              .Doc("Repeated augmentation (timm's RepeatAugSampler): each image this many times an epoch, "
                   "each copy on another rank with its own augmentation; the epoch is cut to the dataset's "
                   "size rounded down to 256 (0: off).")
              .Alias("aug_repeats")),
      // timm's transforms (create_transform), by train.py's names and defaults (docs/data-format.md).
      OmittedAtDefault(AutoAugmentKey())
          .Doc("RandAugment as timm's config string rand-m{M}-n{N}-mstd{S}-mmax{X}-inc{0,1}-p{P} (empty: "
               "none; "
               "then color_jitter applies).")
          .Alias("aa")
          .Validated(),
      OmittedAtDefault(NumberListKey<D>("crop_scale", &D::crop_scale, 0.0, 1.0, /*min_open=*/true, {2}))
          .Doc("RandomResizedCrop: [min, max] fraction of the image's area (default [0.08, 1]).")
          .Alias("scale")
          .Validated(),
      OmittedAtDefault(NumberListKey<D>("crop_ratio", &D::crop_ratio, 0.0, kInf, /*min_open=*/true, {2}))
          .Doc("RandomResizedCrop: [min, max] aspect (width over height), drawn log-uniform (default [3/4, "
               "4/3]).")
          .Alias("ratio")
          .Validated(),
      OmittedAtDefault(WordKey<D>("train_interpolation", &D::train_interpolation,
                                  {"random", "bilinear", "bicubic", "nearest"}))
          .Doc("RandomResizedCrop's filter; random: bilinear or bicubic per image.")
          .Alias("train_interpolation"),
      OmittedAtDefault(NumberKey<D>("vflip", &D::vflip, 0.0, 1.0))
          .Doc("Vertical flip probability.")
          .Alias("vflip"),
      OmittedAtDefault(NumberKey<D>("color_jitter", &D::color_jitter, 0.0))
          .Doc("ColorJitter brightness = contrast = saturation (0: off); only without auto_augment.")
          .Alias("color_jitter"),
      OmittedAtDefault(NumberKey<D>("re_prob", &D::re_prob, 0.0, 1.0))
          .Doc("Random erasing probability, after normalisation (0: off).")
          .Alias("reprob"),
      OmittedAtDefault(WordKey<D>("re_mode", &D::re_mode, {"pixel", "rand", "const"}))
          .Doc("Random erasing fill: pixel (normal per pixel), rand (normal per channel), const (zero).")
          .Alias("remode"),
      OmittedAtDefault(IntKey<D>("re_count", &D::re_count, 1, limits::kMaxEraseCount))
          .Doc("Random erasing: up to this many boxes per image.")
          .Alias("recount"),
      OmittedAtDefault(NumberKey<D>("crop_pct", &D::crop_pct, 0.0, 1.0))
          .Doc("Evaluation: resize the shorter side to img_size / crop_pct, centre-crop img_size (0: the "
               "model's "
               "timm default).")
          .Alias("crop_pct"),
      OmittedAtDefault(WordKey<D>("interpolation", &D::interpolation, {"", "bilinear", "bicubic", "nearest"}))
          .Doc("Evaluation resize filter (empty: the model's timm default).")
          .Alias("interpolation"),
      OmittedAtDefault(NumberListKey<D>("mean", &D::mean, 0.0, 1.0, false, {1, 3}))
          .Doc("Normalisation mean per channel, one value for all (empty: the model's timm default).")
          .Alias("mean")
          .Validated(),
      OmittedAtDefault(NumberListKey<D>("std", &D::std, 0.0, kInf, /*min_open=*/true, {1, 3}))
          .Doc("Normalisation std per channel, one value for all (empty: the model's timm default).")
          .Alias("std")
          .Validated(),
  });
  return *keys;
}

const KeyTable<OptimizerConfig>& OptimizerKeys() {
  static const auto* keys = new KeyTable<O>({
      WordKey<O>("name", &O::name, {"adamw", "lion"})
          .Doc("adamw, or lion (timm's Lion: set beta2, whose timm default for Lion is 0.99, and a lr about "
               "3-10x smaller). Case-insensitive.")
          .Alias("opt"),
      NumberKey<O>("lr", &O::lr, 0.0).Doc("Peak learning rate.").Alias("lr"),
      NumberKey<O>("weight_decay", &O::weight_decay, 0.0)
          .Doc("Decoupled weight decay.")
          .Alias("weight_decay"),
      NumberKey<O>("beta1", &O::beta1, 0.0, 1.0, kOpen).Doc("Adam beta1.").Alias("opt_betas"),
      NumberKey<O>("beta2", &O::beta2, 0.0, 1.0, kOpen).Doc("Adam beta2.").Alias("opt_betas"),
      NumberKey<O>("eps", &O::eps, 0.0).Doc("Adam epsilon.").Alias("opt_eps"),
      NumberKey<O>("clip_grad_norm", &O::clip_grad_norm, 0.0)
          .Doc("Global gradient-norm clipping (0: none).")
          .Alias("clip_grad"),
      NumberKey<O>("label_smoothing", &O::label_smoothing, 0.0, 1.0, kOpen)
          .Doc("Label smoothing.")
          .Alias("smoothing"),
      NumberKey<O>("mixup_alpha", &O::mixup_alpha, 0.0).Doc("Mixup alpha (0: no mixup).").Alias("mixup"),
      OmittedAtDefault(NumberKey<O>("cutmix_alpha", &O::cutmix_alpha, 0.0)
                           .Doc("CutMix alpha (0: no CutMix unless cutmix_min/cutmix_max are set).")
                           .Alias("cutmix")),
      OmittedAtDefault(
          NumberKey<O>("cutmix_min", &O::cutmix_min, 0.0, 1.0)
              .Doc("CutMix box side, lower bound as a fraction of the image's (timm's cutmix_minmax[0]); "
                   "with cutmix_max it replaces cutmix_alpha's boxes.")
              .Validated()),
      OmittedAtDefault(NumberKey<O>("cutmix_max", &O::cutmix_max, 0.0, 1.0)
                           .Doc("CutMix box side, upper bound (timm's cutmix_minmax[1]; 0: unset).")
                           .Validated()),
      OmittedAtDefault(NumberKey<O>("mixup_prob", &O::mixup_prob, 0.0, 1.0)
                           .Doc("Probability of mixing a batch, pair or element.")
                           .Alias("mixup_prob")),
      OmittedAtDefault(NumberKey<O>("mixup_switch_prob", &O::mixup_switch_prob, 0.0, 1.0)
                           .Doc("Probability of CutMix instead of Mixup when both are active.")
                           .Alias("mixup_switch_prob")),
      OmittedAtDefault(WordKey<O>("mixup_mode", &O::mixup_mode, {"batch", "pair", "elem"})
                           .Doc("Mixing parameters drawn per batch, per pair or per element.")
                           .Alias("mixup_mode")),
      OmittedAtDefault(IntKey<O>("mixup_off_epoch", &O::mixup_off_epoch, 0)
                           .Doc("Epoch (0-based) from which nothing is mixed (0: never off).")
                           .Alias("mixup_off_epoch")),
      OmittedAtDefault(
          BoolKey<O>("bce_loss", &O::bce_loss)
              .Doc("Binary cross-entropy loss (timm's BinaryCrossEntropy) where timm's train.py uses it.")
              .Alias("bce_loss")),
      OmittedAtDefault(NumberKey<O>("bce_target_thresh", &O::bce_target_thresh, 0.0, 1.0, kOpen)
                           .Doc("BCE targets binarized: 1 above this value, else 0 (0: not binarized).")
                           .Alias("bce_target_thresh")),
      OmittedAtDefault(BoolKey<O>("bce_sum", &O::bce_sum)
                           .Doc("BCE summed over the classes before the batch mean.")
                           .Alias("bce_sum")),
      OmittedAtDefault(
          NumberKey<O>("layer_decay", &O::layer_decay, 0.0)
              .Doc("Layer-wise learning-rate decay (timm's param_groups_layer_decay): the learning rate of "
                   "layer l of L is scaled by layer_decay^(L - 1 - l) (0: off).")
              .Alias("layer_decay")),
      IntKey<O>("grad_accum_steps", &O::grad_accum_steps, 1)
          .Doc("Micro-batches per optimizer step.")
          .Alias("grad_accum_steps")
          .Validated(),
  });
  return *keys;
}

const KeyTable<ScheduleConfig>& ScheduleKeys() {
  static const auto* keys = new KeyTable<Sc>({
      IntKey<Sc>("epochs", &Sc::epochs, 1).Doc("Total epochs T.").Alias("epochs").Validated(),
      NumberKey<Sc>("warmup_epochs", &Sc::warmup_epochs, 0.0)
          .Doc("Linear warm-up length in epochs (counted in optimizer steps); <= epochs.")
          .Alias("warmup_epochs")
          .Validated(),
      NumberKey<Sc>("min_lr", &Sc::min_lr, 0.0).Doc("Cosine floor.").Alias("min_lr"),
      NumberKey<Sc>("warmup_lr", &Sc::warmup_lr, 0.0)
          .Doc("Learning rate at the start of the warm-up.")
          .Alias("warmup_lr"),
      IntKey<Sc>("log_every_steps", &Sc::log_every_steps, 0)
          .Doc("Also emit a metric point every N optimizer steps (0: every total steps / log_points steps).")
          .Alias("log_interval"),
      // Omitted at its default so that specs written before it keep their hashes (they now log log_points).
      OmittedAtDefault(IntKey<Sc>("log_points", &Sc::log_points, 0, limits::kMaxLogPoints))
          .Doc("With log_every_steps 0: about this many step points over the run (the interval is total "
               "optimizer steps / log_points, at least 1); 0: per epoch only."),
      OmittedAtDefault(BoolKey<Sc>("sparsity_diagnostics", &Sc::sparsity_diagnostics))
          .Doc("At every log point, each sparse layer kind's mask flip rate and the gradient norms at pruned "
               "and kept weights (docs/sparsity-method.md §11); false turns them off."),
      // timm's schedulers (create_scheduler_v2, by train.py's names; docs/nmtrain.md).
      OmittedAtDefault(WordKey<Sc>("sched", &Sc::sched,
                                   {"warmup_cosine", "cosine", "step", "multistep", "plateau", "constant"}))
          .Doc("warmup_cosine: nmsparse's cosine (per update, the warm-up inside epochs, cosine over the "
               "rest); "
               "the others are timm's schedulers of that name. Case-insensitive.")
          .Alias("sched")
          .Validated(),
      OmittedAtDefault(IntKey<Sc>("cooldown_epochs", &Sc::cooldown_epochs, 0))
          .Doc("Epochs at min_lr after a cosine schedule (the run trains them too).")
          .Alias("cooldown_epochs"),
      OmittedAtDefault(BoolKey<Sc>("warmup_prefix", &Sc::warmup_prefix))
          .Doc("The warm-up comes before the schedule's epochs rather than inside them (timm).")
          .Alias("warmup_prefix")
          .Validated(),
      OmittedAtDefault(BoolKey<Sc>("sched_on_updates", &Sc::sched_on_updates))
          .Doc("timm's schedulers step per optimizer update rather than per epoch.")
          .Alias("sched_on_updates")
          .Validated(),
      OmittedAtDefault(NumberKey<Sc>("lr_k_decay", &Sc::lr_k_decay, 0.0, kInf, !kOpen, /*min_open=*/true))
          .Doc("Cosine k-decay exponent.")
          .Alias("lr_k_decay"),
      OmittedAtDefault(NumberKey<Sc>("lr_cycle_mul", &Sc::lr_cycle_mul, 0.0, kInf, !kOpen, /*min_open=*/true))
          .Doc("Cosine: each cycle's length over the previous one's.")
          .Alias("lr_cycle_mul"),
      OmittedAtDefault(NumberKey<Sc>("lr_cycle_decay", &Sc::lr_cycle_decay, 0.0))
          .Doc("Cosine: each cycle's peak rate over the previous one's.")
          .Alias("lr_cycle_decay"),
      OmittedAtDefault(IntKey<Sc>("lr_cycle_limit", &Sc::lr_cycle_limit, 1))
          .Doc("Cosine: cycles.")
          .Alias("lr_cycle_limit"),
      OmittedAtDefault(NumberKey<Sc>("decay_epochs", &Sc::decay_epochs, 0.0, kInf, !kOpen, /*min_open=*/true))
          .Doc("step: epochs between decays.")
          .Alias("decay_epochs"),
      OmittedAtDefault(IntListKey<Sc>("decay_milestones", &Sc::decay_milestones, 1))
          .Doc("multistep: the epochs at which the rate decays, ascending.")
          .Alias("decay_milestones")
          .Validated(),
      OmittedAtDefault(NumberKey<Sc>("decay_rate", &Sc::decay_rate, 0.0))
          .Doc("step, multistep, plateau: the factor of each decay.")
          .Alias("decay_rate"),
      OmittedAtDefault(IntKey<Sc>("patience_epochs", &Sc::patience_epochs, 0))
          .Doc("plateau: epochs without a better top-1 before a decay.")
          .Alias("patience_epochs"),
  });
  return *keys;
}

// cpu_threads 0 reads as 1, as the wire's 0 means.
SpecKey<R> CpuThreadsKey() {
  SpecKey<R> key = IntKey<R>("cpu_threads", &R::cpu_threads, 0);
  auto read = key.read;
  key.read = [read](const YAML::Node& value, const std::string& path, R* r) -> absl::Status {
    if (absl::Status st = read(value, path, r); !st.ok()) return st;
    if (r->cpu_threads == 0) r->cpu_threads = 1;
    return absl::OkStatus();
  };
  return key;
}

const KeyTable<ResourceConfig>& ResourceKeys() {
  static const auto* keys = new KeyTable<R>({
      OmittedAtDefault(IntKey<R>("nodes", &R::nodes, 1, 1024))
          .Doc("Nodes (workers sharing one work directory) the run spans, each with resources.gpus ranks; "
               "nodes x gpus must divide data.batch_size. Written only when not 1."),
      IntKey<R>("gpus", &R::gpus, 1)
          .Doc("Ranks on each node (on a CPU worker, CPU slots); nodes x gpus must divide data.batch_size.")
          .Validated(),
      CpuThreadsKey().Doc("Intra-op threads per rank (0 means 1)."),
      OmittedAtDefault(WordKey<R>("precision", &R::precision, {"fp32", "bf16", "fp16"}))
          .Doc("Forward-pass arithmetic: fp32, bf16 (bfloat16 autocast of the forward passes; weights, "
               "optimizer state, masks and loss stay fp32), or fp16 (float16 autocast with dynamic loss "
               "scaling, torch.amp.GradScaler's rule). Case-insensitive; written only when not fp32.")
          .Alias("amp"),
  });
  return *keys;
}

SpecKey<E> SparsitySectionKey() {
  return MemberKey<E, SparsityConfig>(
             "sparsity", KeyKind::kSection, &E::sparsity,
             [](const YAML::Node& value, const std::string& path) {
               return ParseSparsityConfig(value, path + ".");
             },
             [](const SparsityConfig& s, const KeyInfo& self, SpecWriter* out) {
               WriteSection(SparsityKeys(), s, self, out);
             })
      .Keys(SparsityKeys().Infos());
}

// Written only when it chooses a layer, so that every other run keeps its hash.
SpecKey<E> SemiStructuredSectionKey() {
  return MemberKey<E, SemiStructuredConfig>(
             "semi_structured", KeyKind::kSection, &E::semi_structured, ParseSemiStructuredConfig,
             [](const SemiStructuredConfig& c, const KeyInfo& self, SpecWriter* out) {
               if (c.Enabled()) WriteSection(SemiStructuredKeys(), c, self, out);
             })
      .Keys(SemiStructuredKeys().Infos());
}

}  // namespace

const KeyTable<ExperimentConfig>& ExperimentKeys() {
  static const auto* keys = new KeyTable<E>({
      StringKey<E>("name", &E::name)
          .Doc("Free-form experiment name (part of the content hash).")
          .Alias("experiment"),
      IntKey<E>("seed", &E::seed, 0, std::numeric_limits<int64_t>::max())
          .Doc("Seeds parameter init, data order and augmentation (rank r uses seed + r).")
          .Alias("seed"),
      SectionKey<E>("model", &E::model, ModelKeys())
          .Doc("The model: a catalogued timm name with optional overrides."),
      SectionKey<E>("data", &E::data, DataKeys()).Doc("The dataset and its loader."),
      SectionKey<E>("optimizer", &E::optimizer, OptimizerKeys()).Doc("AdamW and the loss."),
      SectionKey<E>("schedule", &E::schedule, ScheduleKeys())
          .Doc("Epochs and the cosine learning-rate schedule with linear warm-up."),
      SectionKey<E>("resources", &E::resources, ResourceKeys())
          .Doc("Ranks, threads and the precision of the forward passes."),
      SparsitySectionKey().Doc("Structured N:M sparsity (docs/sparsity-method.md §1-§6), with the reference "
                               "code's key names. Dynamic "
                               "unstructured sparsity (§7) goes in `dynamic`, or the whole section is one "
                               "group inline or a list of "
                               "groups."),
      SemiStructuredSectionKey().Doc(
          "Accelerated 2:4 linears on the GPU's semi-structured sparse kernels (cuSPARSELt), "
          "docs/accelerated-2-4.md. Written to the canonical YAML only when layers or activation_layers is "
          "non-empty."),
  });
  return *keys;
}

const std::vector<std::string>& ExperimentSectionKeys(const std::string& section) {
  static const auto* keys = [] {
    auto* m = new std::map<std::string, std::vector<std::string>>;
    for (const SpecKey<E>& key : ExperimentKeys().keys()) {
      (*m)[""].push_back(key.info.name);
      for (const KeyInfo& sub : key.info.keys) (*m)[key.info.name].push_back(sub.name);
    }
    return m;
  }();
  static const std::vector<std::string> kNone;
  auto it = keys->find(section);
  return it == keys->end() ? kNone : it->second;
}

}  // namespace nmsparse
