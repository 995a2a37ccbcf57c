#include "worker/trainer/data/transformed_dataset.h"

#include <stdexcept>
#include <string>

namespace nmsparse {

TransformedDataset::TransformedDataset(const EncodedDataset* data, const ImageTransform* transform,
                                       DecodeFailureLog* log)
    : data_(data),
      transform_(transform),
      log_(log),
      shape_{3, transform->output_height(), transform->output_width()} {}

int64_t TransformedDataset::ReadForEpoch(int64_t index, int epoch, uint64_t image_seed,
                                         uint8_t* pixels) const {
  auto sample = DecodeOrReplace(
      *data_, index, epoch, [&](const ImageSource& source) { return transform_->Apply(source, image_seed); },
      log_);
  if (!sample.ok()) throw DataReadError(std::string(sample.status().message()));
  const Image& image = sample->image;
  if (image.width != shape_.width || image.height != shape_.height || image.channels != shape_.channels) {
    throw std::logic_error("the transform's output does not have its declared shape");
  }
  // HWC to CHW.
  const int64_t plane = static_cast<int64_t>(image.width) * image.height;
  const uint8_t* in = image.pixels.data();
  for (int64_t p = 0; p < plane; ++p) {
    for (int c = 0; c < image.channels; ++c) pixels[c * plane + p] = in[p * image.channels + c];
  }
  return sample->label;
}

}  // namespace nmsparse
