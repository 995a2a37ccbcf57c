// The hook through which a SparseLinear hands its forward pass to another implementation of the same linear
// (e.g. the 2:4 semi-structured kernels): given the layer's input, weight, rule and bias, it returns what
// torch::linear(input, ApplyLayerRule(weight, rule), bias) returns, up to the kernels' rounding, with the
// same gradients.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_LINEAR_ACCELERATOR_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_LINEAR_ACCELERATOR_H_

#include <torch/types.h>

namespace nmsparse {

struct LayerRule;

class LinearAccelerator {
 public:
  virtual ~LinearAccelerator() = default;
  // `rule` may be nullptr (dense); `bias` may be undefined.
  virtual torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight,
                                const LayerRule* rule, const torch::Tensor& bias) = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_LINEAR_ACCELERATOR_H_
