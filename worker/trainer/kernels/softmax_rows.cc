#include "worker/trainer/kernels/softmax_rows.h"

#include <algorithm>
#include <cmath>

#define NMSPARSE_LANES_FILE "worker/trainer/kernels/softmax_rows_lanes.inc"
#include "worker/trainer/kernels/lanes_for_each_isa.inc"

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

KernelIsa SoftmaxRowsIsa(int64_t cols) {
  const KernelIsa active = ActiveKernelIsa();
  if (active == KernelIsa::kAvx512 && cols < kSoftmaxAvx512MinCols) return KernelIsa::kAvx2;
  return active;
}

bool SoftmaxRowsVectorised() { return ActiveKernelIsa() != KernelIsa::kScalar; }

void SoftmaxRowsInPlaceOn(KernelIsa isa, float* x, int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (isa == KernelIsa::kAvx512) return avx512::SoftmaxRows(x, rows, cols);
  if (isa == KernelIsa::kAvx2) return avx2::SoftmaxRows(x, rows, cols);
#endif
  SoftmaxRowsInPlaceScalar(x, rows, cols);
}

void SoftmaxBackwardRowsInPlaceOn(KernelIsa isa, const float* p, float* g, int64_t rows, int64_t cols,
                                  float scale) {
#ifdef NMSPARSE_X86
  if (isa == KernelIsa::kAvx512) return avx512::SoftmaxBackwardRows(p, g, rows, cols, scale);
  if (isa == KernelIsa::kAvx2) return avx2::SoftmaxBackwardRows(p, g, rows, cols, scale);
#endif
  SoftmaxBackwardRowsInPlaceScalar(p, g, rows, cols, scale);
}

void SoftmaxRowsInPlace(float* x, int64_t rows, int64_t cols) {
  SoftmaxRowsInPlaceOn(SoftmaxRowsIsa(cols), x, rows, cols);
}

void SoftmaxBackwardRowsInPlace(const float* p, float* g, int64_t rows, int64_t cols, float scale) {
  SoftmaxBackwardRowsInPlaceOn(SoftmaxRowsIsa(cols), p, g, rows, cols, scale);
}

}  // namespace nmsparse
