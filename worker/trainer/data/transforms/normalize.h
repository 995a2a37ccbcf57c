// torchvision's ToTensor then Normalize, as the loader threads apply it: uint8 CHW to float CHW, x / 255,
// then (x - mean) / std per channel, in float as torch computes it.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nmsparse {

struct ImageNormalization {
  std::array<double, 3> mean = {0.485, 0.456, 0.406};  // timm's IMAGENET_DEFAULT_MEAN.
  std::array<double, 3> std = {0.229, 0.224, 0.225};
};

// The normalisation of bytes: (x / 255.0f - mean) / std in float32, the device's (DeviceTransfer) arithmetic
// bit for bit, worked out once for each of the 256 byte values of each channel, so that a pixel costs a
// look-up instead of two divisions.
class ByteNormalizer {
 public:
  // One mean and std per channel (at most 3), or one for all.
  ByteNormalizer(const std::vector<float>& mean, const std::vector<float>& std);
  // Writes `channels` planes of `plane` floats to `out` from as many planes of bytes in `chw`.
  void Apply(const uint8_t* chw, int channels, int64_t plane, float* out) const;

 private:
  std::array<std::array<float, 256>, 3> table_{};
};

std::string DescribeNormalization(const ImageNormalization& n);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_NORMALIZE_H_
