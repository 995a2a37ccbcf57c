#include "worker/trainer/kernels/gelu_rows.h"

#include <cmath>

namespace nmsparse {
namespace {
// Shared by the plain loops below and the vector ones of gelu_rows_lanes.inc.
constexpr float kInvSqrt2 = 0.70710678f;
constexpr float kInvSqrt2Pi = 0.39894228f;
}  // namespace
}  // namespace nmsparse

#define NMSPARSE_LANES_FILE "worker/trainer/kernels/gelu_rows_lanes.inc"
#include "worker/trainer/kernels/lanes_for_each_isa.inc"

namespace nmsparse {
namespace {

float GeluScalar(float x) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); }

float GeluGradScalar(float x) {
  return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

}  // namespace

GeluPath BestGeluPath() { return ActiveKernelIsa(); }

const char* GeluPathName(GeluPath path) { return KernelIsaName(path); }

bool GeluRowsVectorised() { return BestGeluPath() != GeluPath::kScalar; }

void GeluForwardOn(GeluPath path, const float* x, float* y, int64_t n) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return avx512::GeluForward(x, y, n);
  if (path == GeluPath::kAvx2) return avx2::GeluForward(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void GeluBackwardOn(GeluPath path, const float* x, const float* grad, float* out, int64_t n) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return avx512::GeluBackward(x, grad, out, n);
  if (path == GeluPath::kAvx2) return avx2::GeluBackward(x, grad, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = grad[i] * GeluGradScalar(x[i]);
}

void BiasGeluRowsOn(GeluPath path, float* h, const float* bias, float* y, int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return avx512::BiasGeluRows(h, bias, y, rows, cols);
  if (path == GeluPath::kAvx2) return avx2::BiasGeluRows(h, bias, y, rows, cols);
#endif
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = GeluScalar(h[i] += bias[i % cols]);
}

void GeluBackwardRowsWithBiasGradOn(GeluPath path, const float* h, float* grad, float* bias_grad,
                                    int64_t rows, int64_t cols) {
#ifdef NMSPARSE_X86
  if (path == GeluPath::kAvx512) return avx512::GeluBackwardRows(h, grad, bias_grad, rows, cols);
  if (path == GeluPath::kAvx2) return avx2::GeluBackwardRows(h, grad, bias_grad, rows, cols);
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
