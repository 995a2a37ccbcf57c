#include "worker/trainer/data/transforms/train_transform.h"

#include <utility>

#include "worker/trainer/data/transforms/color_jitter.h"
#include "worker/trainer/data/transforms/flip.h"

namespace nmsparse {

absl::StatusOr<Image> TrainTransform::Apply(const ImageSource& source, uint64_t image_seed) const {
  ImageRng rng(image_seed);
  absl::StatusOr<Image> image = RandomResizedCrop(source, crop_, rng);
  if (!image.ok()) return image.status();
  for (const auto& op : ops_) op->Apply(*image, rng);
  return image;
}

std::string TrainTransform::Describe() const {
  std::string out = DescribeRandomResizedCrop(crop_);
  for (const auto& op : ops_) out += "\n" + op->Describe();
  out += "\n" + DescribeNormalization(normalization_);
  if (erasing_.probability > 0.0) out += "\n" + DescribeRandomErasing(erasing_);
  return out;
}

std::vector<std::unique_ptr<ImageOp>> FlipAndJitterOps(double hflip, double vflip, double color_jitter) {
  std::vector<std::unique_ptr<ImageOp>> ops;
  if (hflip > 0.0) ops.push_back(std::make_unique<RandomFlip>(RandomFlip::Axis::kHorizontal, hflip));
  if (vflip > 0.0) ops.push_back(std::make_unique<RandomFlip>(RandomFlip::Axis::kVertical, vflip));
  if (color_jitter > 0.0) ops.push_back(std::make_unique<ColorJitter>(color_jitter));
  return ops;
}

}  // namespace nmsparse
