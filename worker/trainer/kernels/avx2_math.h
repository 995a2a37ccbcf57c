// AVX2 + FMA building blocks of the CPU kernels: exp, horizontal reductions, tail masks. Every function is
// compiled for AVX2 whatever the build's -march, so callers must check CpuHasAvx2Fma() first (run-time
// dispatch: one binary for old and new x86-64 CPUs).
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_AVX2_MATH_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_AVX2_MATH_H_

#if defined(__x86_64__)
#define NMSPARSE_X86 1
#include <immintrin.h>

#include <cstdint>

namespace nmsparse {
namespace avx2 {

inline bool CpuHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

#define NMSPARSE_AVX2 __attribute__((target("avx2,fma")))

// exp(x) for x <= 88, Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2, a degree-5 polynomial for exp(r),
// then 2^n through the exponent bits. About 1 ulp. Below ln(FLT_MIN) it returns 0 instead of a denormal;
// NaN stays NaN (the clamps take their constant first: min/max return the second operand on NaN).
NMSPARSE_AVX2 inline __m256 Exp(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.33f);
  const __m256 representable = _mm256_cmp_ps(x, lowest, _CMP_NLT_UQ);  // x >= lowest, or NaN
  x = _mm256_max_ps(lowest, _mm256_min_ps(_mm256_set1_ps(88.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);  // ln2 in two parts, for precision
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 poly = _mm256_set1_ps(1.9875691500e-4f);
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(1.3981999507e-3f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(8.3334519073e-3f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(4.1665795894e-2f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(1.6666665459e-1f));
  poly = _mm256_fmadd_ps(poly, r, _mm256_set1_ps(5.0000001201e-1f));
  poly = _mm256_fmadd_ps(poly, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i two_n =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(poly, _mm256_castsi256_ps(two_n)), representable);
}

NMSPARSE_AVX2 inline float HorizontalSum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

NMSPARSE_AVX2 inline float HorizontalMax(__m256 v) {
  const __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// Lane mask selecting the first `count` (0..7) of 8 lanes, for the tail of a row.
NMSPARSE_AVX2 inline __m256i TailMask(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The 8-lane vocabulary the kernels' loops are written in (softmax_rows, bias_rows, the N:M mask selection):
// the same loop text compiled once with these lanes and once with avx512::Lanes (*_lanes.inc files). F holds
// floats, I int32, M a lane mask (here a float vector of all-ones or zero lanes).
struct Lanes {
  using F = __m256;
  using I = __m256i;
  using M = __m256;
  static constexpr int kWidth = 8;

  NMSPARSE_AVX2 static F Load(const float* p) { return _mm256_loadu_ps(p); }
  NMSPARSE_AVX2 static void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  // The lanes of `tail` from p (zeros elsewhere, nothing read there), and a store of those lanes only.
  NMSPARSE_AVX2 static F LoadTail(const float* p, M tail) {
    return _mm256_maskload_ps(p, _mm256_castps_si256(tail));
  }
  NMSPARSE_AVX2 static void StoreTail(float* p, M tail, F v) {
    _mm256_maskstore_ps(p, _mm256_castps_si256(tail), v);
  }
  NMSPARSE_AVX2 static M FirstLanes(int64_t count) { return _mm256_castsi256_ps(TailMask(count)); }

  NMSPARSE_AVX2 static F Set(float v) { return _mm256_set1_ps(v); }
  NMSPARSE_AVX2 static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  NMSPARSE_AVX2 static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  NMSPARSE_AVX2 static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  NMSPARSE_AVX2 static F MulAdd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  NMSPARSE_AVX2 static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  NMSPARSE_AVX2 static F Abs(F v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  NMSPARSE_AVX2 static M Negative(F v) { return _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ); }
  NMSPARSE_AVX2 static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  NMSPARSE_AVX2 static F Exp(F x) { return avx2::Exp(x); }
  NMSPARSE_AVX2 static float ReduceSum(F v) { return HorizontalSum(v); }
  NMSPARSE_AVX2 static float ReduceMax(F v) { return HorizontalMax(v); }
  // yes where m is set, no elsewhere.
  NMSPARSE_AVX2 static F Select(M m, F yes, F no) { return _mm256_blendv_ps(no, yes, m); }

  // |v| as int32 bits (nm_group_select.h's MagnitudeBits, lane by lane).
  NMSPARSE_AVX2 static I MagnitudeBits(F v) {
    return _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
  }
  NMSPARSE_AVX2 static I SetInt(int32_t v) { return _mm256_set1_epi32(v); }
  NMSPARSE_AVX2 static I LoadInt(const int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  // Lane j of the result is lane index[j] of v.
  NMSPARSE_AVX2 static I Permute(I v, I index) { return _mm256_permutevar8x32_epi32(v, index); }
  NMSPARSE_AVX2 static M Greater(I a, I b) { return _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b)); }
  NMSPARSE_AVX2 static M Equal(I a, I b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
  NMSPARSE_AVX2 static M And(M a, M b) { return _mm256_and_ps(a, b); }
  NMSPARSE_AVX2 static M Or(M a, M b) { return _mm256_or_ps(a, b); }
  // acc + 1 where m is set (a set lane is -1 as an integer).
  NMSPARSE_AVX2 static I CountWhere(I acc, M m) { return _mm256_sub_epi32(acc, _mm256_castps_si256(m)); }
};

}  // namespace avx2
}  // namespace nmsparse

#endif  // defined(__x86_64__)
#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_AVX2_MATH_H_
