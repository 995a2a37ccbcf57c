// JPEG decoding with TurboJPEG (libjpeg-turbo), pixel for pixel as Pillow decodes and `convert('RGB')`s the
// image for timm's loader: ISLOW integer IDCT, fancy upsampling, grey replicated to RGB, CMYK read as Adobe's
// inverted CMYK (Pillow assumes that for every CMYK JPEG) and mixed as Pillow's cmyk2rgb does.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_JPEG_DECODER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_JPEG_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image.h"

namespace nmsparse {

struct JpegHeader {
  int width = 0;
  int height = 0;
};

// The image's size from its header, without decoding. DataLoss naming `name` when the bytes are not a JPEG
// (a PNG, anything else) or the header is corrupt.
absl::StatusOr<JpegHeader> ReadJpegHeader(const uint8_t* data, size_t size, const std::string& name);

// The image decoded at 1/`denominator` of its size (1, 2, 4 or 8; sides rounded up) in the DCT domain, RGB.
// DataLoss naming `name` when it is not a JPEG, is truncated or corrupt. Thread-safe.
absl::StatusOr<Image> DecodeJpeg(const uint8_t* data, size_t size, const std::string& name, int denominator);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_JPEG_DECODER_H_
