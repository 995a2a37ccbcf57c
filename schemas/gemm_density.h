// The share of each sparse location's weights that the forward and input-gradient GEMMs of the current step
// multiply (N/M under a hard N:M mask, 1 while W~ is dense), and the share of dY^T that the weight-gradient
// GEMM multiplies (1/2 where MVUE 2:4 prunes it, 1 elsewhere). Plain C++: the FLOP count reads it
// (schemas/model_flops.h, docs/sparsity-method.md §10).
#ifndef NMSPARSE_SCHEMAS_GEMM_DENSITY_H_
#define NMSPARSE_SCHEMAS_GEMM_DENSITY_H_

#include <string>

namespace nmsparse {

struct GemmDensity {
  double ff = 1.0;               // At FF, O and C (n_sparsity:m_sparsity or its SDGF stage).
  double qkv = 1.0;              // At Q, K and V.
  double weight_gradient = 1.0;  // At every sparse location: MVUE 2:4 of dY^T (HU24, SSTE) gives 0.5.
};

// Dynamic sparsity (docs/sparsity-method.md §7): one parameter's GEMM densities, by its name (a weight such
// as "blocks.0.mlp.fc1.weight"): the forward and input-gradient GEMMs at `forward` (the mask's density), the
// weight gradient at `weight_gradient` (1 on the steps RigL and SRigL need the dense gradient).
struct ParameterDensity {
  std::string name;
  double forward = 1.0;
  double weight_gradient = 1.0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_GEMM_DENSITY_H_
