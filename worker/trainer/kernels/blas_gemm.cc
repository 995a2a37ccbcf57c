#include "worker/trainer/kernels/blas_gemm.h"

#include <stdexcept>

#ifndef NMSPARSE_NO_CBLAS
// Declared here rather than through <cblas.h>: the header comes from a -dev package (and differs between
// OpenBLAS and netlib), while the symbol is in every libblas.so.3. The enum values are fixed by the CBLAS
// standard.
extern "C" void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
#endif

namespace nmsparse {
namespace {

constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

}  // namespace

bool HaveBlasGemm() {
#ifdef NMSPARSE_NO_CBLAS
  return false;
#else
  return true;
#endif
}

void Sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef NMSPARSE_NO_CBLAS
  (void)transpose_a, (void)transpose_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b,
      (void)ldb, (void)beta, (void)c, (void)ldc;
  throw std::logic_error("Sgemm: this build has no CBLAS (check HaveBlasGemm() first)");
#else
  cblas_sgemm(kCblasRowMajor, transpose_a ? kCblasTrans : kCblasNoTrans,
              transpose_b ? kCblasTrans : kCblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
#endif
}

}  // namespace nmsparse
