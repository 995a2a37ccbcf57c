#include "worker/trainer/data/transforms/normalize.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace nmsparse {

ByteNormalizer::ByteNormalizer(const std::vector<float>& mean, const std::vector<float>& std) {
  for (size_t c = 0; c < table_.size(); ++c) {
    const float m = mean[mean.size() == 1 ? 0 : c], s = std[std.size() == 1 ? 0 : c];
    for (int v = 0; v < 256; ++v) table_[c][v] = (static_cast<float>(v) / 255.0f - m) / s;
  }
}

void ByteNormalizer::Apply(const uint8_t* chw, int channels, int64_t plane, float* out) const {
  for (int c = 0; c < channels; ++c) {
    const float* table = table_[c].data();
    const uint8_t* in = chw + c * plane;
    float* o = out + c * plane;
    for (int64_t i = 0; i < plane; ++i) o[i] = table[in[i]];
  }
}

std::string DescribeNormalization(const ImageNormalization& n) {
  return absl::StrFormat("Normalize(mean=(%g, %g, %g), std=(%g, %g, %g))", n.mean[0], n.mean[1], n.mean[2],
                         n.std[0], n.std[1], n.std[2]);
}

}  // namespace nmsparse
