// timm's training transform (create_transform with is_training=True) up to the uint8 image:
// RandomResizedCrop, then the size-keeping steps in order (flips, then RandAugment or ColorJitter, which the
// caller supplies as ImageOps). Normalisation and random erasing follow on the float tensor
// (normalize.h, random_erasing.h); Describe() lists them too so that the printed pipeline is the whole one.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_TRAIN_TRANSFORM_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_TRAIN_TRANSFORM_H_

#include <memory>
#include <string>
#include <vector>

#include "worker/trainer/data/image_transform.h"
#include "worker/trainer/data/transforms/normalize.h"
#include "worker/trainer/data/transforms/random_erasing.h"
#include "worker/trainer/data/transforms/random_resized_crop.h"

namespace nmsparse {

class TrainTransform : public ImageTransform {
 public:
  TrainTransform(const RandomResizedCropParams& crop, std::vector<std::unique_ptr<ImageOp>> ops,
                 const ImageNormalization& normalization, const RandomErasingParams& erasing)
      : crop_(crop), ops_(std::move(ops)), normalization_(normalization), erasing_(erasing) {}
  absl::StatusOr<Image> Apply(const ImageSource& source, uint64_t image_seed) const override;
  int output_width() const override { return crop_.width; }
  int output_height() const override { return crop_.height; }
  std::string Describe() const override;

  const ImageNormalization& normalization() const { return normalization_; }
  const RandomErasingParams& erasing() const { return erasing_; }

 private:
  RandomResizedCropParams crop_;
  std::vector<std::unique_ptr<ImageOp>> ops_;
  ImageNormalization normalization_;
  RandomErasingParams erasing_;
};

// timm's size-keeping steps without RandAugment: flips with probability hflip and vflip (when > 0), then
// ColorJitter(color_jitter) when > 0 (timm applies it only without `aa`; the caller decides).
std::vector<std::unique_ptr<ImageOp>> FlipAndJitterOps(double hflip, double vflip, double color_jitter);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_TRAIN_TRANSFORM_H_
