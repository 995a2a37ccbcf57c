#include "worker/trainer/data/transforms/flip.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {

void FlipHorizontal(Image& image) {
  const int ch = image.channels;
  for (int y = 0; y < image.height; ++y) {
    uint8_t* row = image.row(y);
    for (int l = 0, r = image.width - 1; l < r; ++l, --r)
      std::swap_ranges(row + l * ch, row + (l + 1) * ch, row + r * ch);
  }
}

void FlipVertical(Image& image) {
  const int64_t stride = static_cast<int64_t>(image.width) * image.channels;
  for (int t = 0, b = image.height - 1; t < b; ++t, --b)
    std::swap_ranges(image.row(t), image.row(t) + stride, image.row(b));
}

void RandomFlip::Apply(Image& image, ImageRng& rng) const {
  if (!CoinDraw(rng, probability_)) return;
  if (axis_ == Axis::kHorizontal) {
    FlipHorizontal(image);
  } else {
    FlipVertical(image);
  }
}

std::string RandomFlip::Describe() const {
  return absl::StrFormat("Random%sFlip(p=%g)", axis_ == Axis::kHorizontal ? "Horizontal" : "Vertical",
                         probability_);
}

}  // namespace nmsparse
