// An ImageSource over a JPEG's encoded bytes (a file read whole, or a record of a packed shard): the header
// is read when it is made, the pixels when a transform asks for them, at the scale it asks for.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_JPEG_IMAGE_SOURCE_H_
#define NMSPARSE_WORKER_TRAINER_DATA_JPEG_IMAGE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image.h"

namespace nmsparse {

class JpegImageSource : public ImageSource {
 public:
  // `data`/`size` stay valid while `owner` lives. DataLoss naming `name` when the header is not a JPEG's.
  static absl::StatusOr<std::unique_ptr<JpegImageSource>> Open(std::shared_ptr<const void> owner,
                                                               const uint8_t* data, size_t size,
                                                               std::string name);
  // Owns `bytes`.
  static absl::StatusOr<std::unique_ptr<JpegImageSource>> Open(std::string bytes, std::string name);

  int width() const override { return width_; }
  int height() const override { return height_; }
  absl::StatusOr<Image> Decode(int denominator) const override;

 private:
  JpegImageSource() = default;
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  int width_ = 0;
  int height_ = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_JPEG_IMAGE_SOURCE_H_
