// Softmax over the rows of a small row-major float matrix, forward and backward, in place. Vectorised with
// AVX-512 or AVX2 + FMA when the CPU has them (chosen at run time, kernel_isa.h), plain C++ otherwise. The
// fused attention kernel runs these on one head's [tokens, tokens] scores while they are still in cache.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_SOFTMAX_ROWS_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_SOFTMAX_ROWS_H_

#include <cstdint>

#include "worker/trainer/kernels/kernel_isa.h"

namespace nmsparse {

// x[r, :] = softmax(x[r, :]) for each of `rows` rows of `cols` contiguous values.
void SoftmaxRowsInPlace(float* x, int64_t rows, int64_t cols);

// Given the softmax output p and the gradient g with respect to it, overwrites g with the gradient with
// respect to the softmax input, times `scale`: g = scale * p * (g - sum_j(g * p)) row by row.
void SoftmaxBackwardRowsInPlace(const float* p, float* g, int64_t rows, int64_t cols, float scale);

// Whether the vectorised code runs on this CPU (for tests and benchmark labels).
bool SoftmaxRowsVectorised();

// Rows shorter than this stay on AVX2 on an AVX-512 CPU: there the 16-lane reductions cost more than the
// wider lanes save (docs/benchmarks.md, "Issue 37").
constexpr int64_t kSoftmaxAvx512MinCols = 64;

// The path the functions above take for rows of `cols` values.
KernelIsa SoftmaxRowsIsa(int64_t cols);

// The same on a given path, for tests and benchmarks; `isa` must not be wider than CpuKernelIsa().
void SoftmaxRowsInPlaceOn(KernelIsa isa, float* x, int64_t rows, int64_t cols);
void SoftmaxBackwardRowsInPlaceOn(KernelIsa isa, const float* p, float* g, int64_t rows, int64_t cols,
                                  float scale);

// The plain C++ versions, always available (the reference in tests, the fallback on older CPUs).
void SoftmaxRowsInPlaceScalar(float* x, int64_t rows, int64_t cols);
void SoftmaxBackwardRowsInPlaceScalar(const float* p, float* g, int64_t rows, int64_t cols, float scale);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_SOFTMAX_ROWS_H_
