// The geometric ops of timm's RandAugment with Pillow's sampling (Image.transform AFFINE and Image.rotate,
// Geometry.c, Pillow 13): no antialiasing; pixels whose source falls outside the image keep the fill colour.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_AFFINE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_AFFINE_H_

#include <array>
#include <cstdint>

#include "worker/trainer/data/image.h"

namespace nmsparse::pil {

enum class Resample { kNearest, kBilinear, kBicubic };

const char* ResampleName(Resample resample);

using Fill = std::array<uint8_t, 3>;

// Image.transform(size, AFFINE, a, resample, fillcolor=fill): output pixel (x, y) samples the input at
// (a0 x' + a1 y' + a2, a3 x' + a4 y' + a5) where x' = x + 0.5, y' = y + 0.5 (pixel centres).
Image AffineTransform(const Image& image, const std::array<double, 6>& a, Resample resample,
                      const Fill& fill);

// Image.rotate(degrees, resample, fillcolor=fill) about the image centre (w / 2, h / 2), counter-clockwise;
// 0 and 180 degrees (and 90 / 270 on a square image) are Pillow's exact transposes.
Image Rotate(const Image& image, double degrees, Resample resample, const Fill& fill);

// timm's shear_x / shear_y / translate_x_rel / translate_y_rel.
Image ShearX(const Image& image, double factor, Resample resample, const Fill& fill);
Image ShearY(const Image& image, double factor, Resample resample, const Fill& fill);
Image TranslateXRel(const Image& image, double fraction, Resample resample, const Fill& fill);
Image TranslateYRel(const Image& image, double fraction, Resample resample, const Fill& fill);

}  // namespace nmsparse::pil

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_AFFINE_H_
