// A per-image transform from a stored image to the model's input (timm's create_transform, training or
// evaluation; docs/data-format.md). Random choices are drawn from a generator seeded by the caller per
// (seed, epoch, image), so a batch never depends on which loader thread built it.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TRANSFORM_H_
#define NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TRANSFORM_H_

#include <cstdint>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image.h"

namespace nmsparse {

// The random stream of one image's transform, seeded per (seed, epoch, image) by the loader.
using ImageRng = std::mt19937_64;

// One step of a training pipeline that keeps the image's size and channels (a flip, RandAugment, colour
// jitter): the pipeline applies its steps in order, each drawing from the image's stream.
class ImageOp {
 public:
  virtual ~ImageOp() = default;
  virtual void Apply(Image& image, ImageRng& rng) const = 0;
  // The step in words, with its parameters, as `nmctl validate` prints it.
  virtual std::string Describe() const = 0;
};

class ImageTransform {
 public:
  virtual ~ImageTransform() = default;
  // The transformed image: output_width() x output_height(), RGB, uint8 (before normalisation). Passes on the
  // source's DataLoss when it cannot be decoded.
  virtual absl::StatusOr<Image> Apply(const ImageSource& source, uint64_t image_seed) const = 0;
  virtual int output_width() const = 0;
  virtual int output_height() const = 0;
  // The pipeline in words, one step per line, as `nmctl validate` prints it.
  virtual std::string Describe() const = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TRANSFORM_H_
