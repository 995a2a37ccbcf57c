// Resampling with Pillow's semantics (Image.resize; libImaging/Resample.c): separable, horizontal pass then
// vertical, each through an 8-bit intermediate; on a reduction the filter's support widens by the reduction
// factor (antialiasing); weights normalised per output pixel and rounded to 22-bit fixed point, so that
// outputs match Pillow's to the grey level (tests: resample_test against Pillow 13's goldens). NEAREST is
// Pillow's affine nearest (the source pixel under each output pixel's centre).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RESAMPLE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RESAMPLE_H_

#include "worker/trainer/data/image.h"

namespace nmsparse {

enum class Interpolation { kNearest, kBilinear, kBicubic };

// A region of an image in pixel coordinates (edges, not centres): x0 <= x1, y0 <= y1.
struct PixelBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// `image` resized to width x height (Pillow's image.resize((width, height), filter)).
Image Resize(const Image& image, int width, int height, Interpolation filter);

// The region `box` of `image` resized to width x height, reading only pixels of the smallest whole-pixel
// region that covers `box`. For a whole-pixel box this is Pillow's image.crop(box).resize(size, filter),
// which torchvision's resized_crop does; a fractional box is the crop of an image reduced by a JPEG decoder.
Image ResizeRegion(const Image& image, const PixelBox& box, int width, int height, Interpolation filter);

// Tests: false makes the resampler use its portable loops where the CPU has faster ones (the outputs are the
// same bytes either way; the test compares them).
void AllowResampleSimdForTesting(bool allowed);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RESAMPLE_H_
