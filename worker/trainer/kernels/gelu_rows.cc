#include "worker/trainer/kernels/gelu_rows.h"

#include <cmath>

#include "worker/trainer/kernels/avx2_math.h"
#include "worker/trainer/kernels/avx512_math.h"

namespace nmsparse {
namespace {

constexpr float kInvSqrt2 = 0.70710678f;
constexpr float kInvSqrt2Pi = 0.39894228f;

float GeluScalar(float x) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); }

float GeluGradScalar(float x) {
  return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

#ifdef NMSPARSE_X86
using avx2::Exp;
using avx2::TailMask;

struct GeluTerms {
  __m256 phi, gauss;  // Phi(x) = (1 + erf(x / sqrt 2)) / 2, and exp(-x^2 / 2)
};

// erfc(|z|) = poly(t) exp(-z^2) with t = 1 / (1 + p |z|), z = x / sqrt 2 (A&S 7.1.26).
NMSPARSE_AVX2 inline GeluTerms Terms(__m256 x) {
  const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(kInvSqrt2));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), z, one));
  __m256 poly = _mm256_set1_ps(1.061405429f);
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-1.453152027f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(1.421413741f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-0.284496736f));
  poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(0.254829592f));
  poly = _mm256_mul_ps(poly, t);
  const __m256 gauss = Exp(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z)));
  const __m256 half_erfc = _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_mul_ps(poly, gauss));
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  return {_mm256_blendv_ps(_mm256_sub_ps(one, half_erfc), half_erfc, negative), gauss};
}

NMSPARSE_AVX2 inline __m256 Gelu8(__m256 x) { return _mm256_mul_ps(x, Terms(x).phi); }

// d/dx x Phi(x) = Phi(x) + x exp(-x^2 / 2) / sqrt(2 pi)
NMSPARSE_AVX2 inline __m256 GeluGrad8(__m256 x) {
  const GeluTerms terms = Terms(x);
  return _mm256_fmadd_ps(x, _mm256_mul_ps(terms.gauss, _mm256_set1_ps(kInvSqrt2Pi)), terms.phi);
}

NMSPARSE_AVX2 void ForwardAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Gelu8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i tail = TailMask(n - i);
    _mm256_maskstore_ps(y + i, tail, Gelu8(_mm256_maskload_ps(x + i, tail)));
  }
}

NMSPARSE_AVX2 void BackwardAvx2(const float* x, const float* grad, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(grad + i), GeluGrad8(_mm256_loadu_ps(x + i))));
  }
  if (i < n) {
    const __m256i tail = TailMask(n - i);
    const __m256 g = _mm256_maskload_ps(grad + i, tail);
    _mm256_maskstore_ps(out + i, tail, _mm256_mul_ps(g, GeluGrad8(_mm256_maskload_ps(x + i, tail))));
  }
}

NMSPARSE_AVX2 void BiasGeluRowsAvx2(float* h, const float* bias, float* y, int64_t rows, int64_t cols) {
  const int64_t full = cols / 8 * 8;
  const __m256i tail = TailMask(cols - full);
  for (int64_t r = 0; r < rows; ++r, h += cols, y += cols) {
    for (int64_t j = 0; j < full; j += 8) {
      const __m256 v = _mm256_add_ps(_mm256_loadu_ps(h + j), _mm256_loadu_ps(bias + j));
      _mm256_storeu_ps(h + j, v);
      _mm256_storeu_ps(y + j, Gelu8(v));
    }
    if (full < cols) {
      const __m256 v =
          _mm256_add_ps(_mm256_maskload_ps(h + full, tail), _mm256_maskload_ps(bias + full, tail));
      _mm256_maskstore_ps(h + full, tail, v);
      _mm256_maskstore_ps(y + full, tail, Gelu8(v));
    }
  }
}

NMSPARSE_AVX2 void GeluBackwardRowsAvx2(const float* h, float* grad, float* bias_grad, int64_t rows,
                                        int64_t cols) {
  const int64_t full = cols / 8 * 8;
  const __m256i tail = TailMask(cols - full);
  for (int64_t r = 0; r < rows; ++r, h += cols, grad += cols) {
    for (int64_t j = 0; j < full; j += 8) {
      const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(grad + j), GeluGrad8(_mm256_loadu_ps(h + j)));
      _mm256_storeu_ps(grad + j, g);
      _mm256_storeu_ps(bias_grad + j, _mm256_add_ps(_mm256_loadu_ps(bias_grad + j), g));
    }
    if (full < cols) {
      const __m256 g =
          _mm256_mul_ps(_mm256_maskload_ps(grad + full, tail), GeluGrad8(_mm256_maskload_ps(h + full, tail)));
      _mm256_maskstore_ps(grad + full, tail, g);
      _mm256_maskstore_ps(bias_grad + full, tail,
                          _mm256_add_ps(_mm256_maskload_ps(bias_grad + full, tail), g));
    }
  }
}

// The AVX2 code above on 16 lanes: the same operations in the same order per element.
namespace wide {

// Phi(x), and exp(-x^2 / 2) in *gauss: Terms() above.
NMSPARSE_AVX512 inline __m512 Phi(__m512 x, __m512* gauss) {
  const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(kInvSqrt2));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), z, one));
  __m512 poly = _mm512_set1_ps(1.061405429f);
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-1.453152027f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(1.421413741f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(-0.284496736f));
  poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(0.254829592f));
  poly = _mm512_mul_ps(poly, t);
  *gauss = avx512::Exp(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z)));
  const __m512 half_erfc = _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_mul_ps(poly, *gauss));
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(negative, _mm512_sub_ps(one, half_erfc), half_erfc);
}

NMSPARSE_AVX512 inline __m512 Gelu16(__m512 x) {
  __m512 gauss;
  return _mm512_mul_ps(x, Phi(x, &gauss));
}

NMSPARSE_AVX512 inline __m512 GeluGrad16(__m512 x) {
  __m512 gauss;
  const __m512 phi = Phi(x, &gauss);
  return _mm512_fmadd_ps(x, _mm512_mul_ps(gauss, _mm512_set1_ps(kInvSqrt2Pi)), phi);
}

NMSPARSE_AVX512 void Forward(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Gelu16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = avx512::TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, tail, Gelu16(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}

NMSPARSE_AVX512 void Backward(const float* x, const float* grad, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(grad + i), GeluGrad16(_mm512_loadu_ps(x + i))));
  }
  if (i < n) {
    const __mmask16 tail = avx512::TailMask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(tail, grad + i);
    _mm512_mask_storeu_ps(out + i, tail, _mm512_mul_ps(g, GeluGrad16(_mm512_maskz_loadu_ps(tail, x + i))));
  }
}

NMSPARSE_AVX512 void BiasGeluRows(float* h, const float* bias, float* y, int64_t rows, int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __mmask16 tail = avx512::TailMask(cols - full);
  for (int64_t r = 0; r < rows; ++r, h += cols, y += cols) {
    for (int64_t j = 0; j < full; j += 16) {
      const __m512 v = _mm512_add_ps(_mm512_loadu_ps(h + j), _mm512_loadu_ps(bias + j));
      _mm512_storeu_ps(h + j, v);
      _mm512_storeu_ps(y + j, Gelu16(v));
    }
    if (full < cols) {
      const __m512 v =
          _mm512_add_ps(_mm512_maskz_loadu_ps(tail, h + full), _mm512_maskz_loadu_ps(tail, bias + full));
      _mm512_mask_storeu_ps(h + full, tail, v);
      _mm512_mask_storeu_ps(y + full, tail, Gelu16(v));
    }
  }
}

NMSPARSE_AVX512 void BackwardRows(const float* h, float* grad, float* bias_grad, int64_t rows, int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __mmask16 tail = avx512::TailMask(cols - full);
  for (int64_t r = 0; r < rows; ++r, h += cols, grad += cols) {
    for (int64_t j = 0; j < full; j += 16) {
      const __m512 g = _mm512_mul_ps(_mm512_loadu_ps(grad + j), GeluGrad16(_mm512_loadu_ps(h + j)));
      _mm512_storeu_ps(grad + j, g);
      _mm512_storeu_ps(bias_grad + j, _mm512_add_ps(_mm512_loadu_ps(bias_grad + j), g));
    }
    if (full < cols) {
      const __m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, grad + full),
                                     GeluGrad16(_mm512_maskz_loadu_ps(tail, h + full)));
      _mm512_mask_storeu_ps(grad + full, tail, g);
      _mm512_mask_storeu_ps(bias_grad + full, tail,
                            _mm512_add_ps(_mm512_maskz_loadu_ps(tail, bias_grad + full), g));
    }
  }
}

}  // namespace wide
#endif  // NMSPARSE_X86

}  // namespace

GeluPath BestGeluPath() { return ActiveKernelIsa(); }

const char* GeluPathName(GeluPath path) { return KernelIsaName(path); }

bool GeluRowsVectorised() { return BestGeluPath() != GeluPath::kScalar; }

void GeluForwardOn(GeluPath path, const float* x, float* y, int64_t n) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return wide::Forward(x, y, n);
  if (path == GeluPath::kAvx2) return ForwardAvx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void GeluBackwardOn(GeluPath path, const float* x, const float* grad, float* out, int64_t n) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return wide::Backward(x, grad, out, n);
  if (path == GeluPath::kAvx2) return BackwardAvx2(x, grad, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = grad[i] * GeluGradScalar(x[i]);
}

void BiasGeluRowsOn(GeluPath path, float* h, const float* bias, float* y, int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return wide::BiasGeluRows(h, bias, y, rows, cols);
  if (path == GeluPath::kAvx2) return BiasGeluRowsAvx2(h, bias, y, rows, cols);
#endif
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = GeluScalar(h[i] += bias[i % cols]);
}

void GeluBackwardRowsWithBiasGradOn(GeluPath path, const float* h, float* grad, float* bias_grad,
                                    int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return wide::BackwardRows(h, grad, bias_grad, rows, cols);
  if (path == GeluPath::kAvx2) return GeluBackwardRowsAvx2(h, grad, bias_grad, rows, cols);
#endif
  for (int64_t i = 0; i < rows * cols; ++i) bias_grad[i % cols] += (grad[i] *= GeluGradScalar(h[i]));
}

void GeluForward(const float* x, float* y, int64_t n) { GeluForwardOn(BestGeluPath(), x, y, n); }

void GeluBackward(const float* x, const float* grad, float* out, int64_t n) {
  GeluBackwardOn(BestGeluPath(), x, grad, out, n);
}

void BiasGeluRows(float* h, const float* bias, float* y, int64_t rows, int64_t cols) {
  BiasGeluRowsOn(BestGeluPath(), h, bias, y, rows, cols);
}

void GeluBackwardRowsWithBiasGrad(const float* h, float* grad, float* bias_grad, int64_t rows, int64_t cols) {
  GeluBackwardRowsWithBiasGradOn(BestGeluPath(), h, grad, bias_grad, rows, cols);
}

}  // namespace nmsparse
