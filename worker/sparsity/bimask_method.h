// Bi-Mask (Zhang et al., ICML 2023; docs/sparsity-method.md §14) as a sparsity method, with the counters
// of the authors' DeiT code (zyxxmu/Bi-Mask@e63cd37f): every forward of a sparse linear recomputes its N:M
// forward mask from |W| and its backward mask under the layer's current output-row permutation, and the
// forward calls 0, I, 2I, ... (every call counted, evaluation included; I = permutation_refresh_forwards,
// 100) first search that permutation (bimask_masks.h). The forward multiplies W * forward; the backward
// gives dX = dY (W * backward), the dense weight gradient x^T dY plus the SR-STE decay
// srste_lambda * (1 - forward) * W added inside autograd once per sample (MaskedDecaySite::kAutograd: a
// [B, T, C] input multiplies it by B, as the authors' ViT does), and db = sum dY. The N:M engine (as STE)
// places the layers and keeps the phases; this method replaces the layers' forward.
#ifndef NMSPARSE_WORKER_SPARSITY_BIMASK_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_BIMASK_METHOD_H_

#include <memory>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/sparsity_method.h"

namespace nmsparse {

// `config.sparsity_type` must be BIMASK (validated: linears whose dimensions are multiples of M, one N:M).
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateBimaskMethod(const SparsityConfig& config,
                                                                   torch::nn::Module& model,
                                                                   const SparsityMethodOptions& options);

// Bi-Mask's sparse linear on its own (the layer's autograd function): y = x (W * forward)^T + b with the
// backward above; `decay` is srste_lambda, `term_scale` the fp16 loss scale the term is multiplied by
// (undefined: none).
torch::Tensor BimaskLinear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias,
                           const torch::Tensor& forward_mask, const torch::Tensor& backward_mask,
                           double decay, const torch::Tensor& term_scale = torch::Tensor());

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_BIMASK_METHOD_H_
