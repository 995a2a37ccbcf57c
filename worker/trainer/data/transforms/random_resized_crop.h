// timm's RandomResizedCropAndInterpolation: a crop window of random area and log-uniform aspect (get_params,
// 10 attempts then a centred fallback), resized to the output with a fixed or random (bilinear or bicubic)
// filter. Decodes JPEGs reduced in the DCT domain when the window stays at least the output's size.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_RESIZED_CROP_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_RESIZED_CROP_H_

#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image.h"
#include "worker/trainer/data/image_transform.h"
#include "worker/trainer/data/transforms/interpolation.h"
#include "worker/trainer/data/transforms/resample.h"

namespace nmsparse {

// A crop in full-resolution pixels (torchvision's i, j, h, w).
struct CropWindow {
  int top = 0;
  int left = 0;
  int height = 0;
  int width = 0;
};

struct RandomResizedCropParams {
  int width = 224;
  int height = 224;
  double scale_min = 0.08, scale_max = 1.0;             // Fraction of the image's area.
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // Width over height.
  TrainInterpolation interpolation = TrainInterpolation::kRandom;
  // Decode at 1/2, 1/4 or 1/8 when the reduced window still covers the output (off: Pillow's result exactly).
  bool reduced_decode = true;
};

// timm's get_params for an image of img_width x img_height.
CropWindow SampleCropWindow(int img_width, int img_height, const RandomResizedCropParams& p, ImageRng& rng);

// The largest JPEG reduction (1, 2, 4, 8) that keeps `window` at least `width` x `height` pixels.
int ReductionFor(const CropWindow& window, int width, int height);

// Draws the window, then the filter, decodes `source` and resizes the window to the output.
absl::StatusOr<Image> RandomResizedCrop(const ImageSource& source, const RandomResizedCropParams& p,
                                        ImageRng& rng);

// "RandomResizedCrop(224x224, scale=(0.08, 1), ratio=(0.75, 1.333), interpolation=random)".
std::string DescribeRandomResizedCrop(const RandomResizedCropParams& p);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_RANDOM_RESIZED_CROP_H_
