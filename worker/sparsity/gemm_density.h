// The share of each sparse location's weights that the forward and input-gradient GEMMs of the current step
// multiply (N/M under a hard N:M mask, 1 while W~ is dense). Plain C++: the trainer's FLOP count reads it
// (worker/trainer/training_flops.h, docs/sparsity-method.md §10).
#ifndef NMSPARSE_WORKER_SPARSITY_GEMM_DENSITY_H_
#define NMSPARSE_WORKER_SPARSITY_GEMM_DENSITY_H_

namespace nmsparse {

struct GemmDensity {
  double ff = 1.0;   // At FF, O and C (n_sparsity:m_sparsity or its SDGF stage).
  double qkv = 1.0;  // At Q, K and V.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_GEMM_DENSITY_H_
