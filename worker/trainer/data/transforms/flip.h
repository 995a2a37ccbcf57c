// torchvision's RandomHorizontalFlip / RandomVerticalFlip (timm's hflip / vflip probabilities).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_FLIP_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_FLIP_H_

#include <string>

#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

void FlipHorizontal(Image& image);
void FlipVertical(Image& image);

class RandomFlip : public ImageOp {
 public:
  enum class Axis { kHorizontal, kVertical };
  RandomFlip(Axis axis, double probability) : axis_(axis), probability_(probability) {}
  void Apply(Image& image, ImageRng& rng) const override;
  std::string Describe() const override;

 private:
  Axis axis_;
  double probability_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_FLIP_H_
