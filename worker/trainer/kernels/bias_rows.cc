#include "worker/trainer/kernels/bias_rows.h"

#define NMSPARSE_LANES_FILE "worker/trainer/kernels/bias_rows_lanes.inc"
#include "worker/trainer/kernels/lanes_for_each_isa.inc"

namespace nmsparse {

void AddBiasRowsOn(KernelIsa isa, float* y, const float* bias, int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (isa == KernelIsa::kAvx512) return avx512::AddBiasRows(y, bias, rows, cols);
  if (isa == KernelIsa::kAvx2) return avx2::AddBiasRows(y, bias, rows, cols);
#endif
  for (int64_t r = 0; r < rows; ++r, y += cols) {
    for (int64_t j = 0; j < cols; ++j) y[j] += bias[j];
  }
}

void AddColumnSumsOn(KernelIsa isa, const float* g, float* sums, int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (isa == KernelIsa::kAvx512) return avx512::AddColumnSums(g, sums, rows, cols);
  if (isa == KernelIsa::kAvx2) return avx2::AddColumnSums(g, sums, rows, cols);
#endif
  for (int64_t r = 0; r < rows; ++r, g += cols) {
    for (int64_t j = 0; j < cols; ++j) sums[j] += g[j];
  }
}

void AddBiasRows(float* y, const float* bias, int64_t rows, int64_t cols) {
  AddBiasRowsOn(ActiveKernelIsa(), y, bias, rows, cols);
}

void AddColumnSums(const float* g, float* sums, int64_t rows, int64_t cols) {
  AddColumnSumsOn(ActiveKernelIsa(), g, sums, rows, cols);
}

}  // namespace nmsparse
