// torchvision's ColorJitter on a uint8 PIL image, as timm builds it without `aa`: color_jitter c gives
// brightness = contrast = saturation = c (factors uniform in [max(0, 1 - c), 1 + c]) and no hue; the three
// adjustments run in a random order. Each is Pillow's ImageEnhance: a blend with a degenerate image (black,
// the mean grey, the greyscale image) in float, truncated to uint8.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_COLOR_JITTER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_COLOR_JITTER_H_

#include <string>

#include "worker/trainer/data/image_transform.h"

namespace nmsparse {

// torchvision.transforms.functional's adjust_* on a PIL image.
void AdjustBrightness(Image& image, float factor);
void AdjustContrast(Image& image, float factor);
void AdjustSaturation(Image& image, float factor);

// Pillow's convert("L") of one RGB pixel (ITU-R 601-2 luma in 16-bit fixed point).
inline uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

class ColorJitter : public ImageOp {
 public:
  explicit ColorJitter(double strength) : strength_(strength) {}
  void Apply(Image& image, ImageRng& rng) const override;
  std::string Describe() const override;

 private:
  double strength_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_COLOR_JITTER_H_
