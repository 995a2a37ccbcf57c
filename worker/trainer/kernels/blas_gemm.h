// Single-precision GEMM on raw row-major matrices, straight to the BLAS that LibTorch itself loads
// (libblas.so.3: OpenBLAS on Debian). The fused CPU kernels call it once per attention head, where going
// through ATen (a bmm split into per-batch addmm calls, each with its own views) costs more than the product.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_BLAS_GEMM_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_BLAS_GEMM_H_

#include <cstdint>

namespace nmsparse {

// Whether this build has a CBLAS to call (Bazel builds always do; CMake builds when it finds one).
bool HaveBlasGemm();

// c = alpha * op(a) * op(b) + beta * c, with op(a) [m, k], op(b) [k, n], c [m, n], all row-major with the
// given leading dimensions (so a head's block inside a wider row can be read and written in place).
void Sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_BLAS_GEMM_H_
