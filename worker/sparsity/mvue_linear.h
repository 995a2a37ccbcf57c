// The sparse linear of the 2024 recipes (docs/sparsity-method.md §12): y = x W~^T + b whose weight gradient
// is estimated by MVUE 2:4 along tokens, dW~ = MVUE(dY^T) X, while dX = dY W~ and db = sum dY use the whole
// dY. On CPU all three GEMMs run masked dense; on a GPU with cuSPARSELt, W~ and W~^T (2:4 when the mask is
// transposable) and MVUE(dY^T) are the 2:4 operands of the three GEMMs (worker/sparsity/semi_structured/).
#ifndef NMSPARSE_WORKER_SPARSITY_MVUE_LINEAR_H_
#define NMSPARSE_WORKER_SPARSITY_MVUE_LINEAR_H_

#include <torch/types.h>

namespace nmsparse {

// `input` [..., in], `weight` [out, in] (already W~), `bias` [out] or undefined. The backward draws from
// `generator` (torch::Generator is a shared handle: the caller reseeds it per step).
torch::Tensor MvueLinear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias,
                         torch::Generator generator);

// `effective` (computed from `weight` without autograd) with the gradient passed to `weight` unchanged: the
// straight-through estimator of S-STE (dW = dW~, neither masked nor scaled by beta) and of Hu et al.'s
// masked forward.
torch::Tensor StraightThrough(const torch::Tensor& weight, const torch::Tensor& effective);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_MVUE_LINEAR_H_
