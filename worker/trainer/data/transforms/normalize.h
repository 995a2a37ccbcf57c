// torchvision's ToTensor then Normalize: uint8 HWC to float CHW, x / 255, then (x - mean) / std per channel,
// in float as torch computes it.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_

#include <array>
#include <string>

#include "worker/trainer/data/image.h"

namespace nmsparse {

struct ImageNormalization {
  std::array<double, 3> mean = {0.485, 0.456, 0.406};  // timm's IMAGENET_DEFAULT_MEAN.
  std::array<double, 3> std = {0.229, 0.224, 0.225};
};

// Writes image.channels x height x width floats to `chw` (a grey image uses the first mean and std).
void Normalize(const Image& image, const ImageNormalization& n, float* chw);

std::string DescribeNormalization(const ImageNormalization& n);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_
