// AVX-512 building blocks of the CPU kernels, the 16-lane counterparts of avx2_math.h: exp, tail masks,
// Lanes. Every function is compiled for AVX-512 (F, DQ, BW, VL) whatever the build's -march, so callers must
// check CpuHasAvx512() first (run-time dispatch, as for AVX2).
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "worker/trainer/kernels/avx2_math.h"

namespace nmsparse {
namespace avx512 {

inline bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("fma");
  return has;
}

#define NMSPARSE_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

// exp(x) as avx2::Exp (Cephes' expf, about 1 ulp; 0 below ln(FLT_MIN), NaN stays NaN), 16 lanes.
// GCC 12 warns (-Wmaybe-uninitialized, its bug 105593) on the intrinsics built on _mm512_undefined_ps();
// their zero-masked forms with every lane selected are the same instructions without it.
constexpr __mmask16 kAll = 0xFFFF;

NMSPARSE_AVX512 inline __m512 Exp(__m512 x) {
  const __m512 lowest = _mm512_set1_ps(-87.33f);
  const __mmask16 representable = _mm512_cmp_ps_mask(x, lowest, _CMP_NLT_UQ);  // x >= lowest, or NaN
  x = _mm512_maskz_max_ps(kAll, lowest, _mm512_maskz_min_ps(kAll, _mm512_set1_ps(88.0f), x));
  const __m512 n = _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);  // ln2 in two parts, for precision
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 poly = _mm512_set1_ps(1.9875691500e-4f);
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(1.3981999507e-3f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(8.3334519073e-3f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(4.1665795894e-2f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(1.6666665459e-1f));
  poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(5.0000001201e-1f));
  poly = _mm512_fmadd_ps(poly, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i two_n = _mm512_maskz_slli_epi32(
      kAll, _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(representable, poly, _mm512_castsi512_ps(two_n));
}

// The first `count` (0..15) of 16 lanes, for the tail of a row.
inline __mmask16 TailMask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1u); }

// avx2::Lanes on 16 lanes (the same operations, lane by lane), for the loops in the *_lanes.inc files. M is
// an AVX-512 mask register.
struct Lanes {
  using F = __m512;
  using I = __m512i;
  using M = __mmask16;
  static constexpr int kWidth = 16;

  NMSPARSE_AVX512 static F Load(const float* p) { return _mm512_loadu_ps(p); }
  NMSPARSE_AVX512 static void Store(float* p, F v) { _mm512_storeu_ps(p, v); }
  NMSPARSE_AVX512 static F LoadTail(const float* p, M tail) { return _mm512_maskz_loadu_ps(tail, p); }
  NMSPARSE_AVX512 static void StoreTail(float* p, M tail, F v) { _mm512_mask_storeu_ps(p, tail, v); }
  static M FirstLanes(int64_t count) { return TailMask(count); }

  NMSPARSE_AVX512 static F Set(float v) { return _mm512_set1_ps(v); }
  NMSPARSE_AVX512 static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  NMSPARSE_AVX512 static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  NMSPARSE_AVX512 static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  NMSPARSE_AVX512 static F MulAdd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  NMSPARSE_AVX512 static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  NMSPARSE_AVX512 static F Abs(F v) { return _mm512_abs_ps(v); }
  NMSPARSE_AVX512 static M Negative(F v) { return _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ); }
  NMSPARSE_AVX512 static F Max(F a, F b) { return _mm512_maskz_max_ps(kAll, a, b); }
  NMSPARSE_AVX512 static F Exp(F x) { return avx512::Exp(x); }
  // Halves folded onto 8 lanes, then avx2's reductions (zero-masked extracts: see Exp; GCC 12's
  // _mm512_castps512_ps256 is an extract too).
  NMSPARSE_AVX512 static __m256 Low(F v) { return _mm512_maskz_extractf32x8_ps(0xFF, v, 0); }
  NMSPARSE_AVX512 static __m256 High(F v) { return _mm512_maskz_extractf32x8_ps(0xFF, v, 1); }
  NMSPARSE_AVX512 static float ReduceSum(F v) { return avx2::HorizontalSum(_mm256_add_ps(Low(v), High(v))); }
  NMSPARSE_AVX512 static float ReduceMax(F v) { return avx2::HorizontalMax(_mm256_max_ps(Low(v), High(v))); }
  NMSPARSE_AVX512 static F Select(M m, F yes, F no) { return _mm512_mask_blend_ps(m, no, yes); }

  NMSPARSE_AVX512 static I MagnitudeBits(F v) {
    return _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
  }
  NMSPARSE_AVX512 static I SetInt(int32_t v) { return _mm512_set1_epi32(v); }
  NMSPARSE_AVX512 static I LoadInt(const int32_t* p) { return _mm512_loadu_si512(p); }
  NMSPARSE_AVX512 static I Permute(I v, I index) { return _mm512_maskz_permutexvar_epi32(kAll, index, v); }
  NMSPARSE_AVX512 static M Greater(I a, I b) { return _mm512_cmpgt_epi32_mask(a, b); }
  NMSPARSE_AVX512 static M Equal(I a, I b) { return _mm512_cmpeq_epi32_mask(a, b); }
  static M And(M a, M b) { return a & b; }
  static M Or(M a, M b) { return a | b; }
  NMSPARSE_AVX512 static I CountWhere(I acc, M m) {
    return _mm512_mask_add_epi32(acc, m, acc, _mm512_set1_epi32(1));
  }
};

}  // namespace avx512
}  // namespace nmsparse

#endif  // defined(__x86_64__)
#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_
