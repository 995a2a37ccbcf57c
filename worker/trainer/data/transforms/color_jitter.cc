#include "worker/trainer/data/transforms/color_jitter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/str_format.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {
namespace {

// Pillow's ImagingBlend(degenerate, image, alpha): in float, clipped, truncated.
uint8_t Blend(uint8_t degenerate, uint8_t pixel, float alpha) {
  const float v = static_cast<float>(degenerate) +
                  alpha * static_cast<float>(static_cast<int>(pixel) - static_cast<int>(degenerate));
  if (v <= 0.0f) return 0;
  if (v >= 255.0f) return 255;
  return static_cast<uint8_t>(v);
}

}  // namespace

void AdjustBrightness(Image& image, float factor) {
  for (uint8_t& p : image.pixels) p = Blend(0, p, factor);
}

void AdjustContrast(Image& image, float factor) {
  const int64_t n = static_cast<int64_t>(image.width) * image.height;
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* px = image.pixels.data() + i * image.channels;
    sum += image.channels == 3 ? Luma(px) : px[0];
  }
  // ImageStat's mean of the greyscale image, rounded to a grey level.
  const uint8_t mean = static_cast<uint8_t>(static_cast<int>(static_cast<double>(sum) / n + 0.5));
  for (uint8_t& p : image.pixels) p = Blend(mean, p, factor);
}

void AdjustSaturation(Image& image, float factor) {
  if (image.channels != 3) return;
  const int64_t n = static_cast<int64_t>(image.width) * image.height;
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* px = image.pixels.data() + i * 3;
    const uint8_t grey = Luma(px);
    for (int c = 0; c < 3; ++c) px[c] = Blend(grey, px[c], factor);
  }
}

void ColorJitter::Apply(Image& image, ImageRng& rng) const {
  if (strength_ <= 0.0) return;
  // torch.randperm(4) over brightness, contrast, saturation, hue; hue is off (timm passes none).
  std::array<int, 4> order = {0, 1, 2, 3};
  for (int i = 3; i > 0; --i) std::swap(order[i], order[IntDraw(rng, 0, i)]);
  const double lo = std::max(0.0, 1.0 - strength_), hi = 1.0 + strength_;
  const float brightness = static_cast<float>(UniformDraw(rng, lo, hi));
  const float contrast = static_cast<float>(UniformDraw(rng, lo, hi));
  const float saturation = static_cast<float>(UniformDraw(rng, lo, hi));
  for (int fn : order) {
    if (fn == 0) AdjustBrightness(image, brightness);
    if (fn == 1) AdjustContrast(image, contrast);
    if (fn == 2) AdjustSaturation(image, saturation);
  }
}

std::string ColorJitter::Describe() const {
  return absl::StrFormat("ColorJitter(brightness=%g, contrast=%g, saturation=%g, hue=0, random order)",
                         strength_, strength_, strength_);
}

}  // namespace nmsparse
