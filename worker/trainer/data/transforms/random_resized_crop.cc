#include "worker/trainer/data/transforms/random_resized_crop.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {

CropWindow SampleCropWindow(int img_width, int img_height, const RandomResizedCropParams& p, ImageRng& rng) {
  const double area = static_cast<double>(img_width) * img_height;
  const double log_min = std::log(p.ratio_min), log_max = std::log(p.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = UniformDraw(rng, p.scale_min, p.scale_max) * area;
    const double aspect = std::exp(UniformDraw(rng, log_min, log_max));
    const int w = PythonRound(std::sqrt(target_area * aspect));
    const int h = PythonRound(std::sqrt(target_area / aspect));
    if (w <= img_width && h <= img_height) {
      const int top = IntDraw(rng, 0, img_height - h);
      const int left = IntDraw(rng, 0, img_width - w);
      return {top, left, h, w};
    }
  }
  // timm's fallback: the whole image, cut to the nearest allowed aspect, centred.
  const double in_ratio = static_cast<double>(img_width) / img_height;
  const double lo = std::min(p.ratio_min, p.ratio_max), hi = std::max(p.ratio_min, p.ratio_max);
  int w = img_width, h = img_height;
  if (in_ratio < lo) {
    h = PythonRound(w / lo);
  } else if (in_ratio > hi) {
    w = PythonRound(h * hi);
  }
  return {(img_height - h) / 2, (img_width - w) / 2, h, w};
}

int ReductionFor(const CropWindow& window, int width, int height) {
  int denominator = 1;
  while (denominator < 8 && window.width / (2 * denominator) >= width &&
         window.height / (2 * denominator) >= height) {
    denominator *= 2;
  }
  return denominator;
}

absl::StatusOr<Image> RandomResizedCrop(const ImageSource& source, const RandomResizedCropParams& p,
                                        ImageRng& rng) {
  const CropWindow window = SampleCropWindow(source.width(), source.height(), p, rng);
  const Interpolation filter = PickInterpolation(p.interpolation, rng);
  const int denominator = p.reduced_decode ? ReductionFor(window, p.width, p.height) : 1;
  absl::StatusOr<Image> image = source.Decode(denominator);
  if (!image.ok()) return image.status();
  // The window in the decoded image's pixels (a reduced JPEG rounds its sides up).
  const double sx = static_cast<double>(image->width) / source.width();
  const double sy = static_cast<double>(image->height) / source.height();
  const PixelBox box{window.left * sx, window.top * sy, (window.left + window.width) * sx,
                     (window.top + window.height) * sy};
  return ResizeRegion(*image, box, p.width, p.height, filter);
}

std::string DescribeRandomResizedCrop(const RandomResizedCropParams& p) {
  return absl::StrFormat("RandomResizedCrop(%dx%d, scale=(%g, %g), ratio=(%g, %g), interpolation=%s%s)",
                         p.width, p.height, p.scale_min, p.scale_max, p.ratio_min, p.ratio_max,
                         InterpolationName(p.interpolation),
                         p.reduced_decode ? ", JPEG decoded at 1/2..1/8 when the crop allows" : "");
}

}  // namespace nmsparse
