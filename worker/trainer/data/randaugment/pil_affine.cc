#include "worker/trainer/data/randaugment/pil_affine.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace nmsparse::pil {
namespace {

using Matrix = std::array<double, 6>;

// Geometry.c's COORD and FLOOR.
int Coord(double v) { return v < 0.0 ? -1 : static_cast<int>(v); }
int Floor(double v) { return v < 0.0 ? static_cast<int>(std::floor(v)) : static_cast<int>(v); }
int Clip(int v, int size) { return v < 0 ? 0 : (v < size ? v : size - 1); }

Image Filled(const Image& like, const Fill& fill) {
  Image out;
  out.width = like.width;
  out.height = like.height;
  out.channels = like.channels;
  out.pixels.resize(like.pixels.size());
  const int c = like.channels;
  uint8_t* p = out.pixels.data();
  for (size_t i = 0; i < out.pixels.size(); i += c) {
    for (int b = 0; b < c; ++b) p[i + b] = fill[c == 3 ? b : 0];
  }
  return out;
}

void CopyPixel(const Image& in, int x, int y, uint8_t* out) {
  const uint8_t* p = in.row(y) + x * in.channels;
  for (int b = 0; b < in.channels; ++b) out[b] = p[b];
}

// Translation with NEAREST: ImagingScaleAffine's tabulated columns and rows.
void ScaleNearest(const Image& in, const Matrix& a, Image& out) {
  std::vector<int> columns(out.width, -1);
  double xo = a[2] + a[0] * 0.5;
  for (int x = 0; x < out.width; ++x, xo += a[0]) {
    const int xin = Coord(xo);
    if (xin >= 0 && xin < in.width) columns[x] = xin;
  }
  double yo = a[5] + a[4] * 0.5;
  for (int y = 0; y < out.height; ++y, yo += a[4]) {
    const int yin = Coord(yo);
    if (yin < 0 || yin >= in.height) continue;
    for (int x = 0; x < out.width; ++x) {
      if (columns[x] >= 0) CopyPixel(in, columns[x], yin, out.row(y) + x * out.channels);
    }
  }
}

bool FitsFixedPoint(const Matrix& a, int x, int y) {
  return std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 && std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0;
}

// NEAREST in 16.16 fixed point, stepping along rows (Geometry.c affine_fixed).
void FixedNearest(const Image& in, const Matrix& a, Image& out) {
  auto fix = [](double v) { return Floor(v * 65536.0 + 0.5); };
  const int a0 = fix(a[0]), a1 = fix(a[1]), a3 = fix(a[3]), a4 = fix(a[4]);
  int a2 = fix(a[2] + a[0] * 0.5 + a[1] * 0.5);
  int a5 = fix(a[5] + a[3] * 0.5 + a[4] * 0.5);
  for (int y = 0; y < out.height; ++y, a2 += a1, a5 += a4) {
    int xx = a2;
    int yy = a5;
    for (int x = 0; x < out.width; ++x, xx += a0, yy += a3) {
      const int xin = xx >> 16;
      const int yin = yy >> 16;
      if (xin >= 0 && xin < in.width && yin >= 0 && yin < in.height) {
        CopyPixel(in, xin, yin, out.row(y) + x * out.channels);
      }
    }
  }
}

// NEAREST without fixed point, for matrices whose corners overflow it.
void FloatNearest(const Image& in, const Matrix& a, Image& out) {
  double xo = a[2] + a[1] * 0.5 + a[0] * 0.5;
  double yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
  for (int y = 0; y < out.height; ++y, xo += a[1], yo += a[4]) {
    double xx = xo;
    double yy = yo;
    for (int x = 0; x < out.width; ++x, xx += a[0], yy += a[3]) {
      const int xin = Coord(xx);
      const int yin = Coord(yy);
      if (xin >= 0 && xin < in.width && yin >= 0 && yin < in.height) {
        CopyPixel(in, xin, yin, out.row(y) + x * out.channels);
      }
    }
  }
}

// Where one axis of a sample point falls, as Geometry.c's filters find it: inside the image or not (tested
// before the half-pixel shift), the fraction past the tap at or left of the point, and the taps, clipped to
// the image. (Pillow repeats the last valid row below the image instead of clipping; both give the same row.)
template <int kTaps>
struct AxisTaps {
  bool inside = false;
  double d = 0;
  int index[kTaps] = {};
};

template <int kTaps>
AxisTaps<kTaps> TapsAt(double v, int size) {
  AxisTaps<kTaps> taps;
  taps.inside = !(v < 0.0 || v >= size);
  v -= 0.5;
  const int i = Floor(v);
  taps.d = v - i;
  const int first = kTaps == 2 ? i : i - 1;  // Bicubic starts one tap before.
  for (int k = 0; k < kTaps; ++k) taps.index[k] = Clip(first + k, size);
  return taps;
}

// Geometry.c bilinear_filter32RGB: truncated to a byte.
void Bilinear(const Image& in, const AxisTaps<2>& xt, const AxisTaps<2>& yt, uint8_t* out) {
  const int c = in.channels;
  const int x0 = xt.index[0] * c;
  const int x1 = xt.index[1] * c;
  const uint8_t* top = in.row(yt.index[0]);
  const uint8_t* below = in.row(yt.index[1]);
  for (int b = 0; b < c; ++b) {
    const double v1 = top[x0 + b] + (top[x1 + b] - top[x0 + b]) * xt.d;
    const double v2 = below[x0 + b] + (below[x1 + b] - below[x0 + b]) * xt.d;
    out[b] = static_cast<uint8_t>(v1 + (v2 - v1) * yt.d);
  }
}

// Geometry.c's BICUBIC: Pillow's cubic with a = -1 in Horner form.
double Cubic(double v1, double v2, double v3, double v4, double d) {
  const double p1 = v2;
  const double p2 = -v1 + v3;
  const double p3 = 2 * (v1 - v2) + v3 - v4;
  const double p4 = -v1 + v2 - v3 + v4;
  return p1 + d * (p2 + d * (p3 + d * p4));
}

// The first pass of Cubic on bytes: its p2..p4 are integers, exact in int as in double.
double CubicOfBytes(const uint8_t* r, const int* xs, double d) {
  const int v1 = r[xs[0]], v2 = r[xs[1]], v3 = r[xs[2]], v4 = r[xs[3]];
  const double p2 = -v1 + v3;
  const double p3 = 2 * (v1 - v2) + v3 - v4;
  const double p4 = -v1 + v2 - v3 + v4;
  return v2 + d * (p2 + d * (p3 + d * p4));
}

// Geometry.c bicubic_filter32RGB: clamped, truncated to a byte.
void Bicubic(const Image& in, const AxisTaps<4>& xt, const AxisTaps<4>& yt, uint8_t* out) {
  const int c = in.channels;
  int xs[4];
  for (int i = 0; i < 4; ++i) xs[i] = xt.index[i] * c;
  // A cubic at d = 0 is exactly its second tap (p1 + 0 * finite): shears and translations sample whole rows
  // or columns, and skip the taps that cannot change a byte.
  const int first_row = yt.d == 0.0 ? 1 : 0;
  const int last_row = yt.d == 0.0 ? 1 : 3;
  const uint8_t* rows[4];
  for (int i = first_row; i <= last_row; ++i) rows[i] = in.row(yt.index[i]);
  for (int b = 0; b < c; ++b) {
    double v[4];
    for (int i = first_row; i <= last_row; ++i) {
      v[i] = xt.d == 0.0 ? rows[i][xs[1] + b] : CubicOfBytes(rows[i] + b, xs, xt.d);
    }
    const double s = yt.d == 0.0 ? v[1] : Cubic(v[0], v[1], v[2], v[3], yt.d);
    out[b] = s <= 0.0 ? 0 : (s >= 255.0 ? 255 : static_cast<uint8_t>(s));
  }
}

// ImagingGenericTransform with affine_transform: each output pixel centre mapped back into the input. Where
// the matrix keeps an axis independent of the other (a1 = 0: x from the column alone; a3 = 0: y from the row
// alone; the product with 0 adds an exact zero), that axis's taps are found once per column or row.
template <int kTaps, void (*Sample)(const Image&, const AxisTaps<kTaps>&, const AxisTaps<kTaps>&, uint8_t*)>
void Interpolated(const Image& in, const Matrix& a, Image& out) {
  const bool column_table = a[1] == 0;
  const bool row_table = a[3] == 0;
  std::vector<AxisTaps<kTaps>> columns(column_table ? out.width : 0);
  for (int x = 0; x < static_cast<int>(columns.size()); ++x) {
    columns[x] = TapsAt<kTaps>(a[0] * (x + 0.5) + a[1] * 0.5 + a[2], in.width);
  }
  const int c = out.channels;
  for (int y = 0; y < out.height; ++y) {
    uint8_t* dst = out.row(y);
    const double yc = y + 0.5;
    AxisTaps<kTaps> row_taps;
    if (row_table) {
      row_taps = TapsAt<kTaps>(a[3] * 0.5 + a[4] * yc + a[5], in.height);
      if (!row_taps.inside) continue;
    }
    for (int x = 0; x < out.width; ++x, dst += c) {
      const double xc = x + 0.5;
      const AxisTaps<kTaps> xt =
          column_table ? columns[x] : TapsAt<kTaps>(a[0] * xc + a[1] * yc + a[2], in.width);
      if (!xt.inside) continue;
      const AxisTaps<kTaps> yt =
          row_table ? row_taps : TapsAt<kTaps>(a[3] * xc + a[4] * yc + a[5], in.height);
      if (!yt.inside) continue;
      Sample(in, xt, yt, dst);
    }
  }
}

// Python's round(v, 15): correctly rounded to 15 decimals, as glibc's printf rounds.
double Round15(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.15f", v);
  return std::strtod(text, nullptr);
}

// Transpose.ROTATE_180 / ROTATE_90 / ROTATE_270 (counter-clockwise).
Image Transposed(const Image& in, int quarter_turns) {
  Image out = in;
  const int c = in.channels;
  if (quarter_turns % 2 == 1) std::swap(out.width, out.height);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      int ox = x, oy = y;
      if (quarter_turns == 1) ox = y, oy = in.width - 1 - x;
      if (quarter_turns == 2) ox = in.width - 1 - x, oy = in.height - 1 - y;
      if (quarter_turns == 3) ox = in.height - 1 - y, oy = x;
      CopyPixel(in, x, y, out.row(oy) + ox * c);
    }
  }
  return out;
}

}  // namespace

const char* ResampleName(Resample resample) {
  switch (resample) {
    case Resample::kNearest:
      return "nearest";
    case Resample::kBilinear:
      return "bilinear";
    case Resample::kBicubic:
      return "bicubic";
  }
  return "?";
}

Image AffineTransform(const Image& image, const Matrix& a, Resample resample, const Fill& fill) {
  Image out = Filled(image, fill);
  if (resample == Resample::kBilinear) {
    Interpolated<2, Bilinear>(image, a, out);
  } else if (resample == Resample::kBicubic) {
    Interpolated<4, Bicubic>(image, a, out);
  } else if (a[1] == 0 && a[3] == 0) {
    ScaleNearest(image, a, out);
  } else if (FitsFixedPoint(a, 0, 0) && FitsFixedPoint(a, out.width, out.height) &&
             FitsFixedPoint(a, 0, out.height) && FitsFixedPoint(a, out.width, 0)) {
    FixedNearest(image, a, out);
  } else {
    FloatNearest(image, a, out);
  }
  return out;
}

Image Rotate(const Image& image, double degrees, Resample resample, const Fill& fill) {
  double angle = std::fmod(degrees, 360.0);  // Python's %: the divisor's sign.
  if (angle < 0) angle += 360.0;
  if (angle == 0) return image;
  if (angle == 180) return Transposed(image, 2);
  if ((angle == 90 || angle == 270) && image.width == image.height) {
    return Transposed(image, angle == 90 ? 1 : 3);
  }
  const double radians = -(angle * (M_PI / 180.0));
  Matrix m = {Round15(std::cos(radians)),  Round15(std::sin(radians)), 0.0,
              Round15(-std::sin(radians)), Round15(std::cos(radians)), 0.0};
  const double cx = image.width / 2.0;
  const double cy = image.height / 2.0;
  m[2] = m[0] * -cx + m[1] * -cy + 0.0 + cx;
  m[5] = m[3] * -cx + m[4] * -cy + 0.0 + cy;
  return AffineTransform(image, m, resample, fill);
}

Image ShearX(const Image& image, double factor, Resample resample, const Fill& fill) {
  return AffineTransform(image, {1, factor, 0, 0, 1, 0}, resample, fill);
}

Image ShearY(const Image& image, double factor, Resample resample, const Fill& fill) {
  return AffineTransform(image, {1, 0, 0, factor, 1, 0}, resample, fill);
}

Image TranslateXRel(const Image& image, double fraction, Resample resample, const Fill& fill) {
  return AffineTransform(image, {1, 0, fraction * image.width, 0, 1, 0}, resample, fill);
}

Image TranslateYRel(const Image& image, double fraction, Resample resample, const Fill& fill) {
  return AffineTransform(image, {1, 0, 0, 0, 1, fraction * image.height}, resample, fill);
}

}  // namespace nmsparse::pil
