#include "worker/trainer/data/randaugment/pil_colour_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace nmsparse::pil {
namespace {

using Lut = std::array<uint8_t, 256>;
using Histogram = std::array<int64_t, 256>;

void ApplyLut(Image& image, const Lut& lut) {
  for (uint8_t& v : image.pixels) v = lut[v];
}

// One LUT per channel (Pillow's point() with a 256 * bands table).
void ApplyChannelLuts(Image& image, const std::vector<Lut>& luts) {
  const int c = image.channels;
  uint8_t* p = image.pixels.data();
  const size_t n = image.pixels.size();
  for (size_t i = 0; i < n; i += c) {
    for (int b = 0; b < c; ++b) p[i + b] = luts[b][p[i + b]];
  }
}

std::vector<Histogram> ChannelHistograms(const Image& image) {
  std::vector<Histogram> histograms(image.channels, Histogram{});
  const int c = image.channels;
  const uint8_t* p = image.pixels.data();
  const size_t n = image.pixels.size();
  for (size_t i = 0; i < n; i += c) {
    for (int b = 0; b < c; ++b) ++histograms[b][p[i + b]];
  }
  return histograms;
}

Lut Identity() {
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i);
  return lut;
}

// Pillow's RGB -> L: ITU-R 601-2 luma, 16-bit fixed point rounded (Convert.c L24).
uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

// Image.blend(degenerate, image, alpha) per byte: Blend.c in single precision, truncated, clipped only when
// extrapolating.
uint8_t Blend(uint8_t degenerate, uint8_t value, float alpha) {
  const float v = static_cast<float>(degenerate) + alpha * static_cast<float>(value - degenerate);
  if (alpha >= 0.0f && alpha <= 1.0f) return static_cast<uint8_t>(v);
  if (v <= 0.0f) return 0;
  if (v >= 255.0f) return 255;
  return static_cast<uint8_t>(v);
}

// A blend with a flat degenerate (Brightness, Contrast) is a function of the value alone: one LUT.
void BlendWithFlat(Image& image, uint8_t degenerate, double factor) {
  const float alpha = static_cast<float>(factor);
  Lut lut;
  for (int v = 0; v < 256; ++v) lut[v] = Blend(degenerate, static_cast<uint8_t>(v), alpha);
  ApplyLut(image, lut);
}

// ImageFilter.SMOOTH: the 3x3 kernel (1 1 1 / 1 5 1 / 1 1 1) / 13 in single precision with Pillow's +0.5
// rounding offset, rows summed bottom to top (Filter.c ImagingFilter3x3); the outermost rows and columns are
// copied. Returns the smoothed value of byte i of row `mid`.
inline uint8_t Smoothed(const uint8_t* up, const uint8_t* mid, const uint8_t* down, int i, int c) {
  const float edge = static_cast<float>(1.0 / 13.0);
  const float centre = static_cast<float>(5.0 / 13.0);
  auto tap = [](uint8_t v, float k) { return static_cast<float>(v) * k; };
  float ss = 0.5f;
  ss += tap(down[i - c], edge) + tap(down[i], edge) + tap(down[i + c], edge);
  ss += tap(mid[i - c], edge) + tap(mid[i], centre) + tap(mid[i + c], edge);
  ss += tap(up[i - c], edge) + tap(up[i], edge) + tap(up[i + c], edge);
  ss = ss < 0.0f ? 0.0f : ss;  // Filter.c's clip8, branch-free.
  ss = ss > 255.0f ? 255.0f : ss;
  return static_cast<uint8_t>(static_cast<int>(ss));
}

}  // namespace

void AutoContrast(Image& image) {
  std::vector<Lut> luts;
  for (const Histogram& h : ChannelHistograms(image)) {
    int lo = 0;
    while (lo < 255 && h[lo] == 0) ++lo;
    int hi = 255;
    while (hi > 0 && h[hi] == 0) --hi;
    Lut lut = Identity();
    if (hi > lo) {
      const double scale = 255.0 / (hi - lo);
      const double offset = -lo * scale;
      for (int i = 0; i < 256; ++i) {
        const int v = static_cast<int>(i * scale + offset);  // Python's int(): towards zero.
        lut[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
      }
    }
    luts.push_back(lut);
  }
  ApplyChannelLuts(image, luts);
}

void Equalize(Image& image) {
  std::vector<Lut> luts;
  for (const Histogram& h : ChannelHistograms(image)) {
    int64_t total = 0;
    int used = 0;
    int64_t last = 0;  // The count of the highest value present.
    for (int64_t count : h) {
      if (count == 0) continue;
      total += count;
      last = count;
      ++used;
    }
    Lut lut = Identity();
    const int64_t step = used <= 1 ? 0 : (total - last) / 255;
    if (step > 0) {
      int64_t n = step / 2;
      for (int i = 0; i < 256; ++i) {
        // Pillow clips the table's entries to a byte when it builds the LUT.
        lut[i] = static_cast<uint8_t>(std::min<int64_t>(n / step, 255));
        n += h[i];
      }
    }
    luts.push_back(lut);
  }
  ApplyChannelLuts(image, luts);
}

void Invert(Image& image) {
  for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(255 - v);
}

void Posterize(Image& image, int bits) {
  if (bits >= 8) return;
  const int mask = bits <= 0 ? 0 : ~((1 << (8 - bits)) - 1);
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i & mask);
  ApplyLut(image, lut);
}

void Solarize(Image& image, int threshold) {
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i < threshold ? i : 255 - i);
  ApplyLut(image, lut);
}

void SolarizeAdd(Image& image, int add, int threshold) {
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i < threshold ? std::min(255, i + add) : i);
  ApplyLut(image, lut);
}

void Color(Image& image, double factor) {
  if (image.channels != 3) return;  // A grey image is its own degenerate.
  const float alpha = static_cast<float>(factor);
  uint8_t* p = image.pixels.data();
  const size_t n = image.pixels.size();
  for (size_t i = 0; i < n; i += 3) {
    const uint8_t l = Luma(p + i);
    p[i] = Blend(l, p[i], alpha);
    p[i + 1] = Blend(l, p[i + 1], alpha);
    p[i + 2] = Blend(l, p[i + 2], alpha);
  }
}

void Contrast(Image& image, double factor) {
  // ImageStat's mean of the L image, rounded half up.
  const int c = image.channels;
  const uint8_t* p = image.pixels.data();
  const size_t n = image.pixels.size();
  int64_t sum = 0;
  for (size_t i = 0; i < n; i += c) sum += c == 3 ? Luma(p + i) : p[i];
  const int64_t count = static_cast<int64_t>(image.width) * image.height;
  const double mean = count > 0 ? static_cast<double>(sum) / static_cast<double>(count) : 0.0;
  BlendWithFlat(image, static_cast<uint8_t>(static_cast<int>(mean + 0.5)), factor);
}

void Brightness(Image& image, double factor) { BlendWithFlat(image, 0, factor); }

template <bool kInterpolate>
void SharpenRows(const Image& source, float alpha, Image& image) {
  const int c = image.channels;
  for (int y = 1; y < image.height - 1; ++y) {
    const uint8_t* up = source.row(y - 1);
    const uint8_t* mid = source.row(y);
    const uint8_t* down = source.row(y + 1);
    uint8_t* out = image.row(y);
    for (int i = c; i < (image.width - 1) * c; ++i) {
      const float v = static_cast<float>(Smoothed(up, mid, down, i, c)) +
                      alpha * static_cast<float>(mid[i] - Smoothed(up, mid, down, i, c));
      const float clipped = kInterpolate ? v : (v <= 0.0f ? 0.0f : (v >= 255.0f ? 255.0f : v));
      out[i] = static_cast<uint8_t>(static_cast<int>(clipped));
    }
  }
}

void Sharpness(Image& image, double factor) {
  // The border blends with itself: unchanged. The blend's two cases (Blend) as two loops that vectorise.
  const Image source = image;
  const float alpha = static_cast<float>(factor);
  if (alpha >= 0.0f && alpha <= 1.0f) {
    SharpenRows<true>(source, alpha, image);
  } else {
    SharpenRows<false>(source, alpha, image);
  }
}

}  // namespace nmsparse::pil
