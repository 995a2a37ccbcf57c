#include "worker/trainer/data/transforms/resample.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

// x86 builds add vectorised passes picked by the CPU at run time; other builds (an aarch64 GPU node's) keep
// the portable loops, which the compiler vectorises for their baseline.
#if defined(__x86_64__) || defined(__i386__)
#define NMSPARSE_RESAMPLE_SSSE3 1
#define NMSPARSE_AVX2_AND_BASELINE __attribute__((target_clones("avx2", "default")))
#include <tmmintrin.h>
#else
#define NMSPARSE_AVX2_AND_BASELINE
#endif

namespace nmsparse {
namespace {

// Pillow's 8-bit weights: 32 bits less 8 for the pixel and 2 for the sum's headroom.
constexpr int kPrecisionBits = 32 - 8 - 2;

double Triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Keys' cubic with a = -0.5, as Pillow's bicubic_filter.
double Cubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

struct Filter {
  double (*fn)(double);
  double support;
};

Filter FilterOf(Interpolation filter) {
  return filter == Interpolation::kBicubic ? Filter{Cubic, 2.0} : Filter{Triangle, 1.0};
}

// The source span and fixed-point weights of each output pixel along one axis (Pillow's precompute_coeffs
// and normalize_coeffs_8bpc). `in0`, `in1` are the box's edges in a source axis of `in_size` pixels.
struct Coefficients {
  int ksize = 0;
  std::vector<int> first;   // First source pixel of output i.
  std::vector<int> count;   // Source pixels of output i.
  std::vector<int> weight;  // ksize per output pixel.
};

Coefficients Precompute(int in_size, float in0, float in1, int out_size, const Filter& filter) {
  const double scale = static_cast<double>(in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter.support * filter_scale;
  Coefficients c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(out_size);
  c.count.resize(out_size);
  c.weight.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filter_scale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = filter.fn((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    for (int x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      const double fixed = w * (1 << kPrecisionBits);
      c.weight[static_cast<size_t>(xx) * c.ksize + x] = static_cast<int>(w < 0 ? fixed - 0.5 : fixed + 0.5);
    }
    c.first[xx] = xmin;
    c.count[xx] = std::max(xmax, 0);
  }
  return c;
}

uint8_t Clip8(int sum) { return static_cast<uint8_t>(std::clamp(sum >> kPrecisionBits, 0, 255)); }

// Output row `y` of the horizontal pass from source row `src`. kChannels > 0 fixes the channel count at
// compile time: all channels of a pixel are summed in one pass over its taps (the per-channel loop read each
// tap three times, strided, and was most of the resampler's time); 0 reads it from `channels`.
template <int kChannels>
void HorizontalRow(const uint8_t* src, int channels, const Coefficients& c, int out_width, uint8_t* dst) {
  const int ch = kChannels > 0 ? kChannels : channels;
  for (int xx = 0; xx < out_width; ++xx) {
    const int* k = &c.weight[static_cast<size_t>(xx) * c.ksize];
    const uint8_t* s = src + static_cast<int64_t>(c.first[xx]) * ch;
    if constexpr (kChannels > 0) {
      int sum[kChannels];
      for (int b = 0; b < kChannels; ++b) sum[b] = 1 << (kPrecisionBits - 1);
      for (int x = 0; x < c.count[xx]; ++x) {
        for (int b = 0; b < kChannels; ++b) sum[b] += s[x * kChannels + b] * k[x];
      }
      for (int b = 0; b < kChannels; ++b) dst[xx * kChannels + b] = Clip8(sum[b]);
    } else {
      for (int b = 0; b < ch; ++b) {
        int sum = 1 << (kPrecisionBits - 1);
        for (int x = 0; x < c.count[xx]; ++x) sum += s[x * ch + b] * k[x];
        dst[xx * ch + b] = Clip8(sum);
      }
    }
  }
}

std::atomic<bool> simd_allowed{true};

#if NMSPARSE_RESAMPLE_SSSE3
// HorizontalRow<3>'s sums with SSSE3, exactly: pmaddwd multiplies 16-bit lanes and adds them in pairs, so
// each step takes two taps of a pixel's three channels (lanes r0 r1 g0 g1 b0 b1). A 22-bit weight does not
// fit 16 bits: it is split as k = hi * 2048 + lo (hi = k >> 11, 0 <= lo < 2048), and the sum is
// 2048 * sum(p * hi) + sum(p * lo), the same integer. About 3x fewer instructions than the scalar loop, whose
// three multiplies per tap bound it.
class RgbHorizontalSsse3 {
 public:
  explicit RgbHorizontalSsse3(const Coefficients& c) : c_(c) {
    for (size_t xx = 0; xx < c.first.size(); ++xx) {
      start_.push_back(static_cast<int>(pairs_.size()));
      const int* k = &c.weight[xx * c.ksize];
      for (int x = 0; x < c.count[xx]; x += 2) {
        const int k0 = k[x], k1 = x + 1 < c.count[xx] ? k[x + 1] : 0;  // An odd span's last pair: weight 0.
        const int16_t h0 = static_cast<int16_t>(k0 >> 11), h1 = static_cast<int16_t>(k1 >> 11);
        const int16_t l0 = static_cast<int16_t>(k0 - h0 * 2048), l1 = static_cast<int16_t>(k1 - h1 * 2048);
        pairs_.push_back({{h0, h1, h0, h1, h0, h1, 0, 0}, {l0, l1, l0, l1, l0, l1, 0, 0}});
      }
      span_end_ = std::max(span_end_, c.first[xx] + c.count[xx] + 1);
    }
    start_.push_back(static_cast<int>(pairs_.size()));
    padded_.assign(static_cast<size_t>(span_end_) * 3 + 16, 0);
  }

  // One output row of c.first.size() pixels from `src`, the source row from the spans' origin on.
  __attribute__((target("ssse3"))) void Row(const uint8_t* src, uint8_t* dst) {
    // A step reads 8 bytes for its 6: the row goes through a copy with room after it.
    if (span_end_ > 1) std::memcpy(padded_.data(), src, static_cast<size_t>(span_end_ - 1) * 3);
    const __m128i spread = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    const __m128i round = _mm_set1_epi32(1 << (kPrecisionBits - 1));
    const __m128i zero = _mm_setzero_si128();
    for (size_t xx = 0; xx < c_.first.size(); ++xx) {
      const uint8_t* s = padded_.data() + static_cast<size_t>(c_.first[xx]) * 3;
      __m128i hi = zero, lo = zero;
      for (int p = start_[xx]; p < start_[xx + 1]; ++p, s += 6) {
        const __m128i px = _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)), spread);
        const __m128i* weights = reinterpret_cast<const __m128i*>(&pairs_[p]);
        hi = _mm_add_epi32(hi, _mm_madd_epi16(px, _mm_load_si128(weights)));
        lo = _mm_add_epi32(lo, _mm_madd_epi16(px, _mm_load_si128(weights + 1)));
      }
      __m128i sum = _mm_add_epi32(_mm_add_epi32(_mm_slli_epi32(hi, 11), lo), round);
      sum = _mm_srai_epi32(sum, kPrecisionBits);
      // Saturating packs: Clip8's clamp to 0..255.
      const uint32_t rgb =
          static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(sum, sum), zero)));
      std::memcpy(dst + xx * 3, &rgb, 3);
    }
  }

  static bool Usable() {
    return simd_allowed.load(std::memory_order_relaxed) && __builtin_cpu_supports("ssse3");
  }

 private:
  const Coefficients& c_;
  struct alignas(16) Pair {
    int16_t hi[8], lo[8];  // Lanes r0 r1 g0 g1 b0 b1 - -: the two taps' weights, split.
  };
  std::vector<Pair> pairs_;  // Output pixel after output pixel.
  std::vector<int> start_;   // Output pixel xx's pairs: [start_[xx], start_[xx + 1]).
  int span_end_ = 0;         // Past the last source pixel any pair reads.
  std::vector<uint8_t> padded_;
};
#endif

// Resamples rows [row0, row0 + rows) of `in`, columns from `col0` on, to c.first.size() columns.
Image Horizontal(const Image& in, int col0, int row0, int rows, const Coefficients& c) {
  Image out{static_cast<int>(c.first.size()), rows, in.channels, {}};
  out.pixels.resize(out.numel());
  const int ch = in.channels;
#if NMSPARSE_RESAMPLE_SSSE3
  if (ch == 3 && RgbHorizontalSsse3::Usable()) {
    RgbHorizontalSsse3 simd(c);
    for (int y = 0; y < rows; ++y) simd.Row(in.row(row0 + y) + static_cast<int64_t>(col0) * ch, out.row(y));
    return out;
  }
#endif
  for (int y = 0; y < rows; ++y) {
    const uint8_t* src = in.row(row0 + y) + static_cast<int64_t>(col0) * ch;
    if (ch == 3) {
      HorizontalRow<3>(src, ch, c, out.width, out.row(y));
    } else if (ch == 1) {
      HorizontalRow<1>(src, ch, c, out.width, out.row(y));
    } else {
      HorizontalRow<0>(src, ch, c, out.width, out.row(y));
    }
  }
  return out;
}

// Resamples columns [col0, col0 + cols) of `in`, rows offset by `row0`, to c.first.size() rows.
// Its inner loop (a row of bytes times one weight, into int32 sums) vectorises 8 wide with AVX2 and 4 wide
// without: built both ways, the CPU picks at load time (+10% RandomResizedCrop on an EPYC,
// docs/benchmarks.md). Integer sums: the same bytes either way.
NMSPARSE_AVX2_AND_BASELINE Image Vertical(const Image& in, int col0, int cols, int row0,
                                          const Coefficients& c) {
  Image out{cols, static_cast<int>(c.first.size()), in.channels, {}};
  out.pixels.resize(out.numel());
  const int ch = in.channels;
  const int64_t stride = static_cast<int64_t>(in.width) * ch;
  std::vector<int> sums(static_cast<size_t>(cols) * ch);
  for (int yy = 0; yy < out.height; ++yy) {
    const int* k = &c.weight[static_cast<size_t>(yy) * c.ksize];
    std::fill(sums.begin(), sums.end(), 1 << (kPrecisionBits - 1));
    for (int y = 0; y < c.count[yy]; ++y) {
      const uint8_t* s =
          in.pixels.data() + (row0 + c.first[yy] + y) * stride + static_cast<int64_t>(col0) * ch;
      for (int i = 0; i < cols * ch; ++i) sums[i] += s[i] * k[y];
    }
    uint8_t* dst = out.row(yy);
    for (int i = 0; i < cols * ch; ++i) dst[i] = Clip8(sums[i]);
  }
  return out;
}

// Pillow's ImagingScaleAffine: the source pixel under each output centre, stepping in double.
Image Nearest(const Image& image, const PixelBox& box, int x_lo, int y_lo, int x_hi, int y_hi, int width,
              int height) {
  const float b[4] = {static_cast<float>(box.x0), static_cast<float>(box.y0), static_cast<float>(box.x1),
                      static_cast<float>(box.y1)};
  const double ax = static_cast<double>(b[2] - b[0]) / width;
  const double ay = static_cast<double>(b[3] - b[1]) / height;
  auto coord = [](double v) { return v < 0.0 ? -1 : static_cast<int>(v); };
  std::vector<int> xin(width);
  double xo = b[0] - x_lo + ax * 0.5;
  for (int x = 0; x < width; ++x, xo += ax) xin[x] = std::clamp(coord(xo), 0, x_hi - x_lo - 1) + x_lo;
  Image out{width, height, image.channels, {}};
  out.pixels.resize(out.numel());
  const int ch = image.channels;
  double yo = b[1] - y_lo + ay * 0.5;
  for (int y = 0; y < height; ++y, yo += ay) {
    const uint8_t* src = image.row(std::clamp(coord(yo), 0, y_hi - y_lo - 1) + y_lo);
    uint8_t* dst = out.row(y);
    for (int x = 0; x < width; ++x) std::copy_n(src + static_cast<int64_t>(xin[x]) * ch, ch, dst + x * ch);
  }
  return out;
}

}  // namespace

void AllowResampleSimdForTesting(bool allowed) { simd_allowed = allowed; }

Image Resize(const Image& image, int width, int height, Interpolation filter) {
  return ResizeRegion(image, {0.0, 0.0, static_cast<double>(image.width), static_cast<double>(image.height)},
                      width, height, filter);
}

Image ResizeRegion(const Image& image, const PixelBox& box, int width, int height, Interpolation filter) {
  // The whole pixels the box touches, within the image: the region Pillow's crop would keep.
  const int x_lo = std::clamp(static_cast<int>(std::floor(box.x0)), 0, image.width - 1);
  const int y_lo = std::clamp(static_cast<int>(std::floor(box.y0)), 0, image.height - 1);
  const int x_hi = std::clamp(static_cast<int>(std::ceil(box.x1)), x_lo + 1, image.width);
  const int y_hi = std::clamp(static_cast<int>(std::ceil(box.y1)), y_lo + 1, image.height);
  if (filter == Interpolation::kNearest) return Nearest(image, box, x_lo, y_lo, x_hi, y_hi, width, height);
  // Box edges in the region's coordinates, as the float Pillow keeps them.
  const float bx0 = static_cast<float>(box.x0 - x_lo), bx1 = static_cast<float>(box.x1 - x_lo);
  const float by0 = static_cast<float>(box.y0 - y_lo), by1 = static_cast<float>(box.y1 - y_lo);
  const int region_w = x_hi - x_lo, region_h = y_hi - y_lo;
  const Filter f = FilterOf(filter);
  const bool need_horizontal = width != region_w || bx0 != 0 || bx1 != region_w;
  const bool need_vertical = height != region_h || by0 != 0 || by1 != region_h;
  const Coefficients horizontal = Precompute(region_w, bx0, bx1, width, f);
  Coefficients vertical = Precompute(region_h, by0, by1, height, f);
  if (!need_horizontal && !need_vertical) {
    Image out{width, height, image.channels, {}};
    out.pixels.resize(out.numel());
    for (int y = 0; y < height; ++y) {
      std::copy_n(image.row(y_lo + y) + static_cast<int64_t>(x_lo) * image.channels,
                  static_cast<int64_t>(width) * image.channels, out.row(y));
    }
    return out;
  }
  if (!need_horizontal) return Vertical(image, x_lo, width, y_lo, vertical);
  // Only the rows the vertical pass reads go through the horizontal one.
  const int first_row = vertical.first.front();
  const int last_row = vertical.first.back() + vertical.count.back();
  for (int& f0 : vertical.first) f0 -= first_row;
  Image rows = Horizontal(image, x_lo, y_lo + first_row, last_row - first_row, horizontal);
  if (!need_vertical) return rows;
  return Vertical(rows, 0, width, 0, vertical);
}

}  // namespace nmsparse
