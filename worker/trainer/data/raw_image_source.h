// An ImageSource over pixels already decoded (CIFAR's records): Decode returns them at full size whatever the
// denominator, as the ImageSource contract allows.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RAW_IMAGE_SOURCE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RAW_IMAGE_SOURCE_H_

#include <utility>

#include "worker/trainer/data/image.h"

namespace nmsparse {

class RawImageSource : public ImageSource {
 public:
  explicit RawImageSource(Image image) : image_(std::move(image)) {}
  int width() const override { return image_.width; }
  int height() const override { return image_.height; }
  absl::StatusOr<Image> Decode(int /*denominator*/) const override { return image_; }

 private:
  Image image_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RAW_IMAGE_SOURCE_H_
