#include "worker/trainer/kernels/softmax_rows.h"

#include <algorithm>
#include <cmath>

#include "worker/trainer/kernels/avx2_math.h"

namespace nmsparse {

void SoftmaxRowsInPlaceScalar(float* x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r, x += cols) {
    const float max = *std::max_element(x, x + cols);
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) sum += (x[j] = std::exp(x[j] - max));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < cols; ++j) x[j] *= inv;
  }
}

void SoftmaxBackwardRowsInPlaceScalar(const float* p, float* g, int64_t rows, int64_t cols, float scale) {
  for (int64_t r = 0; r < rows; ++r, p += cols, g += cols) {
    float dot = 0.0f;
    for (int64_t j = 0; j < cols; ++j) dot += g[j] * p[j];
    for (int64_t j = 0; j < cols; ++j) g[j] = scale * p[j] * (g[j] - dot);
  }
}

#ifdef NMSPARSE_X86
namespace {

using avx2::Exp;
using avx2::HorizontalMax;
using avx2::HorizontalSum;
using avx2::TailMask;

NMSPARSE_AVX2 void SoftmaxRowsAvx2(float* x, int64_t rows, int64_t cols) {
  const int64_t full = cols / 8 * 8;
  const __m256i tail = TailMask(cols - full);
  for (int64_t r = 0; r < rows; ++r, x += cols) {
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    for (int64_t j = 0; j < full; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + j));
    if (full < cols) {
      const __m256 v = _mm256_maskload_ps(x + full, tail);
      vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, _mm256_castsi256_ps(tail)));
    }
    const __m256 max = _mm256_set1_ps(HorizontalMax(vmax));
    __m256 vsum = _mm256_setzero_ps();
    for (int64_t j = 0; j < full; j += 8) {
      const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), max));
      _mm256_storeu_ps(x + j, e);
      vsum = _mm256_add_ps(vsum, e);
    }
    if (full < cols) {
      const __m256 e = _mm256_and_ps(Exp(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), max)),
                                     _mm256_castsi256_ps(tail));
      _mm256_maskstore_ps(x + full, tail, e);
      vsum = _mm256_add_ps(vsum, e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / HorizontalSum(vsum));
    for (int64_t j = 0; j < full; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
    if (full < cols) {
      _mm256_maskstore_ps(x + full, tail, _mm256_mul_ps(_mm256_maskload_ps(x + full, tail), inv));
    }
  }
}

NMSPARSE_AVX2 void SoftmaxBackwardRowsAvx2(const float* p, float* g, int64_t rows, int64_t cols,
                                           float scale) {
  const int64_t full = cols / 8 * 8;
  const __m256i tail = TailMask(cols - full);
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int64_t r = 0; r < rows; ++r, p += cols, g += cols) {
    __m256 vdot = _mm256_setzero_ps();
    for (int64_t j = 0; j < full; j += 8) {
      vdot = _mm256_fmadd_ps(_mm256_loadu_ps(g + j), _mm256_loadu_ps(p + j), vdot);
    }
    if (full < cols) {  // masked loads read zeros past the row, so the products there are 0
      vdot = _mm256_fmadd_ps(_mm256_maskload_ps(g + full, tail), _mm256_maskload_ps(p + full, tail), vdot);
    }
    const __m256 dot = _mm256_set1_ps(HorizontalSum(vdot));
    for (int64_t j = 0; j < full; j += 8) {
      const __m256 sp = _mm256_mul_ps(vscale, _mm256_loadu_ps(p + j));
      _mm256_storeu_ps(g + j, _mm256_mul_ps(sp, _mm256_sub_ps(_mm256_loadu_ps(g + j), dot)));
    }
    if (full < cols) {
      const __m256 sp = _mm256_mul_ps(vscale, _mm256_maskload_ps(p + full, tail));
      _mm256_maskstore_ps(g + full, tail,
                          _mm256_mul_ps(sp, _mm256_sub_ps(_mm256_maskload_ps(g + full, tail), dot)));
    }
  }
}

}  // namespace

bool SoftmaxRowsVectorised() { return avx2::CpuHasAvx2Fma(); }

void SoftmaxRowsInPlace(float* x, int64_t rows, int64_t cols) {
  if (avx2::CpuHasAvx2Fma()) return SoftmaxRowsAvx2(x, rows, cols);
  SoftmaxRowsInPlaceScalar(x, rows, cols);
}

void SoftmaxBackwardRowsInPlace(const float* p, float* g, int64_t rows, int64_t cols, float scale) {
  if (avx2::CpuHasAvx2Fma()) return SoftmaxBackwardRowsAvx2(p, g, rows, cols, scale);
  SoftmaxBackwardRowsInPlaceScalar(p, g, rows, cols, scale);
}

#else  // not x86-64: the plain versions

bool SoftmaxRowsVectorised() { return false; }

void SoftmaxRowsInPlace(float* x, int64_t rows, int64_t cols) { SoftmaxRowsInPlaceScalar(x, rows, cols); }

void SoftmaxBackwardRowsInPlace(const float* p, float* g, int64_t rows, int64_t cols, float scale) {
  SoftmaxBackwardRowsInPlaceScalar(p, g, rows, cols, scale);
}

#endif

}  // namespace nmsparse
