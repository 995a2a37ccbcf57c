#include "worker/trainer/data/jpeg_image_source.h"

#include <utility>

#include "worker/trainer/data/jpeg_decoder.h"

namespace nmsparse {

absl::StatusOr<std::unique_ptr<JpegImageSource>> JpegImageSource::Open(std::shared_ptr<const void> owner,
                                                                       const uint8_t* data, size_t size,
                                                                       std::string name) {
  auto header = ReadJpegHeader(data, size, name);
  if (!header.ok()) return header.status();
  std::unique_ptr<JpegImageSource> source(new JpegImageSource());
  source->owner_ = std::move(owner);
  source->data_ = data;
  source->size_ = size;
  source->name_ = std::move(name);
  source->width_ = header->width;
  source->height_ = header->height;
  return source;
}

absl::StatusOr<std::unique_ptr<JpegImageSource>> JpegImageSource::Open(std::string bytes, std::string name) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const auto* data = reinterpret_cast<const uint8_t*>(owned->data());
  const size_t size = owned->size();
  return Open(std::move(owned), data, size, std::move(name));
}

absl::StatusOr<Image> JpegImageSource::Decode(int denominator) const {
  return DecodeJpeg(data_, size_, name_, denominator);
}

}  // namespace nmsparse
