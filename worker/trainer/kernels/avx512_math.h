// AVX-512 building blocks of the CPU kernels, the 16-lane counterparts of avx2_math.h: exp, tail masks.
// Every function is compiled for AVX-512 (F, DQ, BW, VL) whatever the build's -march, so callers must check
// CpuHasAvx512() first (run-time dispatch, as for AVX2).
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

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

}  // namespace avx512
}  // namespace nmsparse

#endif  // defined(__x86_64__)
#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_AVX512_MATH_H_
