#include "schemas/data_pipeline.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "schemas/model_catalog.h"

namespace nmsparse {
namespace {

// One value per channel: a single value stands for all (timm's rule for mean and std).
std::vector<double> PerChannel(const std::vector<double>& given, const std::vector<double>& own,
                               int channels) {
  const std::vector<double>& values = given.empty() ? own : given;
  if (values.size() == 1) return std::vector<double>(channels, values[0]);
  return values;
}

std::string Tuple(const std::vector<double>& values) {
  return "(" +
         absl::StrJoin(values, ", ",
                       [](std::string* out, double v) { absl::StrAppendFormat(out, "%g", v); }) +
         ")";
}

std::string DescribeRandAugment(const RandAugmentConfig& c) {
  return absl::StrFormat("RandAugment(m=%d, n=%d, mstd=%g, mmax=%g, inc=%d, p=%g)", c.magnitude, c.num_layers,
                         c.magnitude_std, c.UpperBound(), c.increasing ? 1 : 0, c.prob);
}

}  // namespace

void FixedSizeDatasetNormalization(const std::string& dataset, std::vector<double>* mean,
                                   std::vector<double>* std) {
  const bool fashion = dataset == "fashion_mnist";
  *mean = {fashion ? 0.2860 : 0.5};
  *std = {fashion ? 0.3530 : 0.5};
}

absl::StatusOr<DataPipeline> ResolveDataPipeline(const ExperimentConfig& config) {
  const DataConfig& d = config.data;
  absl::StatusOr<ModelArch> arch =
      LookupModel(config.model.name, config.model.img_size, config.model.in_chans, config.model.num_classes);
  if (!arch.ok()) return arch.status();
  DataPipeline p;
  p.img_size = arch->img_size;
  p.scale_min = d.crop_scale[0];
  p.scale_max = d.crop_scale[1];
  p.ratio_min = d.crop_ratio[0];
  p.ratio_max = d.crop_ratio[1];
  p.train_interpolation = d.train_interpolation;
  p.hflip = d.hflip;
  p.vflip = d.vflip;
  p.rand_augment = !d.auto_augment.empty();
  if (p.rand_augment) {
    absl::StatusOr<RandAugmentConfig> ra = ParseRandAugmentConfig(d.auto_augment);
    if (!ra.ok()) return ra.status();
    p.rand_augment_config = *ra;
  }
  p.color_jitter = p.rand_augment ? 0.0 : d.color_jitter;
  p.mean = PerChannel(d.mean, arch->mean, arch->in_chans);
  p.std = PerChannel(d.std, arch->std, arch->in_chans);
  p.re_prob = d.re_prob;
  p.re_mode = d.re_mode;
  p.re_count = d.re_count;
  p.crop_pct = d.crop_pct > 0.0 ? d.crop_pct : arch->crop_pct;
  p.interpolation = d.interpolation.empty() ? arch->interpolation : d.interpolation;
  p.eval_resize = static_cast<int>(std::floor(p.img_size / p.crop_pct));
  p.stored_images = IsStoredImageDataset(d.dataset);
  if (!p.stored_images) {
    p.crop_padding = d.random_crop_padding;
    FixedSizeDatasetNormalization(d.dataset, &p.mean, &p.std);
  }
  return p;
}

namespace {

// Fixed-size images as stored (docs/data-format.md): no resizing, the same normalisation for evaluation.
std::string DescribeFixedSizePipeline(const DataPipeline& p) {
  std::string out = "train (images as stored):\n";
  if (p.crop_padding > 0) absl::StrAppendFormat(&out, "  RandomCrop(padding=%d)\n", p.crop_padding);
  if (p.hflip > 0) absl::StrAppendFormat(&out, "  RandomHorizontalFlip(p=%g)\n", p.hflip);
  absl::StrAppend(&out, "  Normalize(mean=", Tuple(p.mean), ", std=", Tuple(p.std), ")\n");
  absl::StrAppend(&out, "eval (images as stored):\n  Normalize(mean=", Tuple(p.mean), ", std=", Tuple(p.std),
                  ")\n");
  return out;
}

}  // namespace

std::string DescribeDataPipeline(const DataPipeline& p) {
  if (!p.stored_images) return DescribeFixedSizePipeline(p);
  std::string out = "train (timm create_transform, is_training=True):\n";
  absl::StrAppendFormat(
      &out, "  RandomResizedCrop(%dx%d, scale=(%g, %g), ratio=(%g, %g), interpolation=%s)\n", p.img_size,
      p.img_size, p.scale_min, p.scale_max, p.ratio_min, p.ratio_max, p.train_interpolation);
  if (p.hflip > 0) absl::StrAppendFormat(&out, "  RandomHorizontalFlip(p=%g)\n", p.hflip);
  if (p.vflip > 0) absl::StrAppendFormat(&out, "  RandomVerticalFlip(p=%g)\n", p.vflip);
  if (p.rand_augment) absl::StrAppend(&out, "  ", DescribeRandAugment(p.rand_augment_config), "\n");
  if (p.color_jitter > 0) {
    absl::StrAppendFormat(&out, "  ColorJitter(brightness=%g, contrast=%g, saturation=%g, hue=0)\n",
                          p.color_jitter, p.color_jitter, p.color_jitter);
  }
  absl::StrAppend(&out, "  Normalize(mean=", Tuple(p.mean), ", std=", Tuple(p.std), ")\n");
  if (p.re_prob > 0) {
    absl::StrAppendFormat(&out, "  RandomErasing(p=%g, mode=%s, count=1..%d)\n", p.re_prob, p.re_mode,
                          p.re_count);
  }
  absl::StrAppend(&out, "eval (timm create_transform, is_training=False):\n");
  absl::StrAppendFormat(&out, "  Resize(shorter side %d = floor(%d / crop_pct %g), interpolation=%s)\n",
                        p.eval_resize, p.img_size, p.crop_pct, p.interpolation);
  absl::StrAppendFormat(&out, "  CenterCrop(%dx%d)\n", p.img_size, p.img_size);
  absl::StrAppend(&out, "  Normalize(mean=", Tuple(p.mean), ", std=", Tuple(p.std), ")\n");
  return out;
}

}  // namespace nmsparse
