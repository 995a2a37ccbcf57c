// A decoded image and a source that decodes one on demand: the contract between the dataset readers
// (ImageFolder, packed JPEG, CIFAR) and the transforms (timm's pipeline, docs/data-format.md). Plain C++, no
// LibTorch, so that readers, converters and transforms compile fast.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_IMAGE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_IMAGE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse {

// Pixels row-major, channels interleaved (HWC), 8 bits: RGB (3 channels) or grey (1).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;  // height * width * channels bytes.

  int64_t numel() const { return static_cast<int64_t>(width) * height * channels; }
  uint8_t* row(int y) { return pixels.data() + static_cast<int64_t>(y) * width * channels; }
  const uint8_t* row(int y) const { return pixels.data() + static_cast<int64_t>(y) * width * channels; }
};

// One stored image, not yet decoded. Transforms read its size first (a random crop is chosen on the full
// image), then ask for pixels at the smallest scale that still covers their output: JPEG can decode at 1/2,
// 1/4 or 1/8 of its size in the DCT domain for a fraction of the cost.
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // Size of the stored image at full resolution.
  virtual int width() const = 0;
  virtual int height() const = 0;
  // The image reduced by `denominator` (1, 2, 4 or 8; each side rounded up, as libjpeg does). A source that
  // cannot reduce returns the full image: callers use the returned width and height, not the request.
  // Always RGB. DataLoss, naming the file, when the image cannot be decoded.
  virtual absl::StatusOr<Image> Decode(int denominator) const = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_IMAGE_H_
