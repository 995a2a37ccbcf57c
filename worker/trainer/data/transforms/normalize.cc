#include "worker/trainer/data/transforms/normalize.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace nmsparse {

void Normalize(const Image& image, const ImageNormalization& n, float* chw) {
  const int64_t plane = static_cast<int64_t>(image.width) * image.height;
  for (int c = 0; c < image.channels; ++c) {
    const float mean = static_cast<float>(n.mean[c]);
    const float std = static_cast<float>(n.std[c]);
    float* out = chw + c * plane;
    const uint8_t* in = image.pixels.data() + c;
    for (int64_t i = 0; i < plane; ++i)
      out[i] = (static_cast<float>(in[i * image.channels]) / 255.0f - mean) / std;
  }
}

std::string DescribeNormalization(const ImageNormalization& n) {
  return absl::StrFormat("Normalize(mean=(%g, %g, %g), std=(%g, %g, %g))", n.mean[0], n.mean[1], n.mean[2],
                         n.std[0], n.std[1], n.std[2]);
}

}  // namespace nmsparse
