#include "worker/trainer/data/run_transforms.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/trainer/data/randaugment/rand_augment.h"
#include "worker/trainer/data/transforms/eval_transform.h"
#include "worker/trainer/data/transforms/interpolation.h"
#include "worker/trainer/data/transforms/normalize.h"
#include "worker/trainer/data/transforms/random_erasing.h"
#include "worker/trainer/data/transforms/train_transform.h"

namespace nmsparse {
namespace {

absl::Status Invalid(const std::string& key, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat(key, ": ", status.message()));
}

// Normalise as DeviceTransfer does on the device (x / 255, then - mean, then / std, in float32: the same
// result bit for bit), then erase from the image's own erasing stream.
HostFinish NormaliseThenErase(const Normalization& n, const RandomErasingParams& erasing, int size) {
  const ByteNormalizer normalizer(n.mean, n.std);
  return [normalizer, erasing, size](const uint8_t* chw, float* out, uint64_t image_seed) {
    normalizer.Apply(chw, 3, static_cast<int64_t>(size) * size, out);
    ImageRng rng = ErasingRng(image_seed);
    RandomErase(erasing, out, 3, size, size, rng);
  };
}

}  // namespace

absl::StatusOr<RunTransforms> MakeRunTransforms(const DataPipeline& p) {
  RunTransforms t;
  t.normalization.mean.assign(p.mean.begin(), p.mean.end());
  t.normalization.std.assign(p.std.begin(), p.std.end());
  if (p.mean.size() != 3 || p.std.size() != 3) {
    return absl::InvalidArgumentError("data.mean / data.std: stored images are RGB: give 1 or 3 values");
  }
  const std::array<double, 3> mean = {p.mean[0], p.mean[1], p.mean[2]};

  RandomResizedCropParams crop;
  crop.width = crop.height = p.img_size;
  crop.scale_min = p.scale_min;
  crop.scale_max = p.scale_max;
  crop.ratio_min = p.ratio_min;
  crop.ratio_max = p.ratio_max;
  auto train_filter = ParseTrainInterpolation(p.train_interpolation);
  if (!train_filter.ok()) return Invalid("data.train_interpolation", train_filter.status());
  crop.interpolation = *train_filter;

  std::vector<std::unique_ptr<ImageOp>> ops = FlipAndJitterOps(p.hflip, p.vflip, p.color_jitter);
  if (p.rand_augment) {
    // timm's hparams: the fill is the mean as bytes; a fixed training interpolation is RandAugment's too.
    std::optional<pil::Resample> resample;
    if (*train_filter == TrainInterpolation::kBilinear) resample = pil::Resample::kBilinear;
    if (*train_filter == TrainInterpolation::kBicubic) resample = pil::Resample::kBicubic;
    if (*train_filter == TrainInterpolation::kNearest) resample = pil::Resample::kNearest;
    ops.push_back(std::make_unique<RandAugment>(p.rand_augment_config, RandAugmentFill(mean), resample));
  }

  RandomErasingParams erasing;
  erasing.probability = p.re_prob;
  erasing.max_count = p.re_count;
  auto mode = ParseEraseMode(p.re_mode);
  if (!mode.ok()) return Invalid("data.re_mode", mode.status());
  erasing.mode = *mode;

  ImageNormalization normalization;
  normalization.mean = mean;
  normalization.std = {p.std[0], p.std[1], p.std[2]};
  t.train = std::make_unique<TrainTransform>(crop, std::move(ops), normalization, erasing);
  if (erasing.probability > 0.0) t.train_finish = NormaliseThenErase(t.normalization, erasing, p.img_size);

  EvalTransformParams eval;
  eval.img_size = p.img_size;
  eval.crop_pct = p.crop_pct;
  auto eval_filter = ParseInterpolation(p.interpolation);
  if (!eval_filter.ok()) return Invalid("data.interpolation", eval_filter.status());
  eval.interpolation = *eval_filter;
  t.eval = std::make_unique<EvalTransform>(eval);
  return t;
}

}  // namespace nmsparse
