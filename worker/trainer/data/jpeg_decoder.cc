#include "worker/trainer/data/jpeg_decoder.h"

#include <turbojpeg.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

// One TurboJPEG decompressor per thread: a handle is not thread-safe, and making one per image costs more
// than decoding a small one. After an error the handle is replaced: TurboJPEG 2.1 can leave libjpeg's state
// mid-header, and the next image would then fail ("Bogus marker length").
class Decompressor {
 public:
  Decompressor() : handle_(tjInitDecompress()) {}
  ~Decompressor() { tjDestroy(handle_); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  tjhandle get() const { return handle_; }
  void Reset() {
    tjDestroy(handle_);
    handle_ = tjInitDecompress();
  }

 private:
  tjhandle handle_;
};

Decompressor& ThreadDecompressor() {
  thread_local Decompressor decompressor;
  return decompressor;
}

// The error's message, after which the thread's handle is made fresh.
std::string TakeError(Decompressor& decompressor) {
  std::string why = tjGetErrorStr2(decompressor.get());
  decompressor.Reset();
  return why;
}

// Names what the bytes are when they are not a JPEG, for the message.
std::string NotJpegReason(const uint8_t* data, size_t size) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (size >= 8 && std::memcmp(data, kPng, 8) == 0) return "a PNG image, not a JPEG";
  if (size == 0) return "an empty file, not a JPEG";
  return "not a JPEG (no start-of-image marker)";
}

bool HasJpegMagic(const uint8_t* data, size_t size) {
  return size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}

// Pillow's MULDIV255: a * b / 255 rounded, in integers.
uint8_t MulDiv255(int a, int b) {
  const int t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

// Pillow reads every CMYK JPEG as inverted ("CMYK;I", Adobe's convention), then cmyk2rgb computes
// R = (255 - C') * (255 - K') / 255 with C' = 255 - stored: R = stored C * stored K / 255.
void CmykToRgb(const std::vector<uint8_t>& cmyk, Image* rgb) {
  const int64_t n = static_cast<int64_t>(rgb->width) * rgb->height;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = cmyk.data() + 4 * i;
    uint8_t* q = rgb->pixels.data() + 3 * i;
    for (int c = 0; c < 3; ++c) q[c] = MulDiv255(p[c], p[3]);
  }
}

}  // namespace

absl::StatusOr<JpegHeader> ReadJpegHeader(const uint8_t* data, size_t size, const std::string& name) {
  if (!HasJpegMagic(data, size))
    return absl::DataLossError(absl::StrCat(name, ": ", NotJpegReason(data, size)));
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  Decompressor& decompressor = ThreadDecompressor();
  if (tjDecompressHeader3(decompressor.get(), data, static_cast<unsigned long>(size), &width, &height,
                          &subsampling, &colorspace) != 0) {
    return absl::DataLossError(absl::StrCat(name, ": corrupt JPEG header: ", TakeError(decompressor)));
  }
  return JpegHeader{width, height};
}

absl::StatusOr<Image> DecodeJpeg(const uint8_t* data, size_t size, const std::string& name, int denominator) {
  if (denominator != 1 && denominator != 2 && denominator != 4 && denominator != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": decode denominator ", denominator, " is not 1, 2, 4 or 8"));
  }
  if (!HasJpegMagic(data, size))
    return absl::DataLossError(absl::StrCat(name, ": ", NotJpegReason(data, size)));
  Decompressor& decompressor = ThreadDecompressor();
  tjhandle handle = decompressor.get();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, data, static_cast<unsigned long>(size), &width, &height, &subsampling,
                          &colorspace) != 0) {
    return absl::DataLossError(absl::StrCat(name, ": corrupt JPEG header: ", TakeError(decompressor)));
  }
  const tjscalingfactor scale{1, denominator};
  Image image;
  image.width = TJSCALED(width, scale);
  image.height = TJSCALED(height, scale);
  image.channels = 3;
  image.pixels.resize(image.numel());
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  std::vector<uint8_t> cmyk_pixels(cmyk ? static_cast<size_t>(image.width) * image.height * 4 : 0);
  uint8_t* out = cmyk ? cmyk_pixels.data() : image.pixels.data();
  // ACCURATEDCT states the ISLOW IDCT Pillow uses (also libjpeg's default); fancy upsampling stays on.
  const int status = tjDecompress2(handle, data, static_cast<unsigned long>(size), out, image.width, 0,
                                   image.height, cmyk ? TJPF_CMYK : TJPF_RGB, TJFLAG_ACCURATEDCT);
  if (status != 0) {
    const bool warning = tjGetErrorCode(handle) == TJERR_WARNING;
    const std::string why = TakeError(decompressor);
    // Warnings (e.g. extraneous bytes before a marker) leave a complete image, as Pillow accepts it; a
    // truncated file (libjpeg fills the rest with grey) is an error in Pillow and here.
    if (!warning || absl::StrContains(why, "Premature end")) {
      return absl::DataLossError(absl::StrCat(name, ": truncated or corrupt JPEG: ", why));
    }
  }
  if (cmyk) CmykToRgb(cmyk_pixels, &image);
  return image;
}

}  // namespace nmsparse
