#include "worker/trainer/data/transforms/eval_transform.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "worker/trainer/data/transforms/interpolation.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {

void ShorterSideSize(int width, int height, int size, int* out_width, int* out_height) {
  const bool wide = width > height;
  const int shorter = wide ? height : width, longer = wide ? width : height;
  const int new_long = static_cast<int>(static_cast<double>(static_cast<int64_t>(size) * longer) / shorter);
  *out_width = wide ? new_long : size;
  *out_height = wide ? size : new_long;
}

Image CenterCrop(const Image& image, int size) {
  // torchvision pads a smaller side symmetrically (the odd pixel after), else crops at round((side - size) /
  // 2).
  auto offset = [size](int side) {
    return size > side ? -((size - side) / 2) : PythonRound((side - size) / 2.0);
  };
  const int left = offset(image.width), top = offset(image.height);
  const int ch = image.channels;
  Image out{size, size, ch, std::vector<uint8_t>(static_cast<size_t>(size) * size * ch, 0)};
  const int x_from = std::max(0, -left), x_to = std::min(size, image.width - left);
  for (int y = 0; y < size; ++y) {
    const int sy = y + top;
    if (sy < 0 || sy >= image.height || x_from >= x_to) continue;
    std::copy_n(image.row(sy) + static_cast<int64_t>(x_from + left) * ch, (x_to - x_from) * ch,
                out.row(y) + x_from * ch);
  }
  return out;
}

int EvalTransform::resize_size() const {
  return static_cast<int>(std::floor(params_.img_size / params_.crop_pct));
}

absl::StatusOr<Image> EvalTransform::Apply(const ImageSource& source, uint64_t /*image_seed*/) const {
  absl::StatusOr<Image> image = source.Decode(1);
  if (!image.ok()) return image.status();
  int width = 0, height = 0;
  ShorterSideSize(image->width, image->height, resize_size(), &width, &height);
  if (width != image->width || height != image->height) {
    *image = Resize(*image, width, height, params_.interpolation);
  }
  return CenterCrop(*image, params_.img_size);
}

std::string EvalTransform::Describe() const {
  return absl::StrFormat(
      "Resize(shorter side %d = floor(%d / crop_pct %g), interpolation=%s)\nCenterCrop(%dx%d)", resize_size(),
      params_.img_size, params_.crop_pct, InterpolationName(params_.interpolation), params_.img_size,
      params_.img_size);
}

}  // namespace nmsparse
