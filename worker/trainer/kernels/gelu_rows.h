// GELU (exact, erf form) on raw float arrays: the vectorised loops behind FusedGelu and FusedMlp. erf comes
// from Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, one float ulp of 1 + erf); for x < 0, Phi(x)
// is taken from erfc directly (no cancellation), and the backward reuses the same exp(-x^2 / 2). AVX-512 or
// AVX2 + FMA when the CPU has them (chosen at run time), plain C++ with std::erf otherwise.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_GELU_ROWS_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_GELU_ROWS_H_

#include <cstdint>

#include "worker/trainer/kernels/kernel_isa.h"

namespace nmsparse {

// The code paths (kernel_isa.h): plain C++ (always there), AVX2 + FMA, AVX-512 (F, DQ, BW, VL: 1.3-1.7x
// AVX2 on the micro ViT's and ViT-S's Mlp blocks, docs/benchmarks.md).
using GeluPath = KernelIsa;

// ActiveKernelIsa(): the path the functions below take.
GeluPath BestGeluPath();

// KernelIsaName().
const char* GeluPathName(GeluPath path);

// Whether the vectorised loops run on this CPU (the plain ones are slower than ATen's gelu).
bool GeluRowsVectorised();

// y = gelu(x) for n values.
void GeluForward(const float* x, float* y, int64_t n);

// out = grad * gelu'(x) for n values (out may alias grad).
void GeluBackward(const float* x, const float* grad, float* out, int64_t n);

// For a [rows, cols] row-major block: h += bias (per column), then y = gelu(h). h keeps the biased value
// (what the backward needs).
void BiasGeluRows(float* h, const float* bias, float* y, int64_t rows, int64_t cols);

// For a [rows, cols] block: grad = grad * gelu'(h) in place, and bias_grad[j] += sum over rows of the result.
void GeluBackwardRowsWithBiasGrad(const float* h, float* grad, float* bias_grad, int64_t rows, int64_t cols);

// The same on a given path, for tests and benchmarks; `path` must not be wider than CpuKernelIsa().
void GeluForwardOn(GeluPath path, const float* x, float* y, int64_t n);
void GeluBackwardOn(GeluPath path, const float* x, const float* grad, float* out, int64_t n);
void BiasGeluRowsOn(GeluPath path, float* h, const float* bias, float* y, int64_t rows, int64_t cols);
void GeluBackwardRowsWithBiasGradOn(GeluPath path, const float* h, float* grad, float* bias_grad,
                                    int64_t rows, int64_t cols);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_GELU_ROWS_H_
