// The bias loops of the fused Mlp (fc2's side: fc1's bias goes with GELU in gelu_rows.h) on raw row-major
// float blocks: AVX-512 or AVX2 when the CPU has them (kernel_isa.h), plain C++ otherwise. One addition per
// value, so every path gives the same bits.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_BIAS_ROWS_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_BIAS_ROWS_H_

#include <cstdint>

#include "worker/trainer/kernels/kernel_isa.h"

namespace nmsparse {

// y[r, j] += bias[j] for a [rows, cols] block.
void AddBiasRows(float* y, const float* bias, int64_t rows, int64_t cols);

// sums[j] += sum over rows of g[r, j], rows in order (the bias gradient of a block).
void AddColumnSums(const float* g, float* sums, int64_t rows, int64_t cols);

// The same on a given path, for tests and benchmarks; `isa` must not be wider than CpuKernelIsa().
void AddBiasRowsOn(KernelIsa isa, float* y, const float* bias, int64_t rows, int64_t cols);
void AddColumnSumsOn(KernelIsa isa, const float* g, float* sums, int64_t rows, int64_t cols);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_BIAS_ROWS_H_
