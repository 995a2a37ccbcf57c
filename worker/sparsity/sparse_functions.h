// The autograd functions of the sparse recipes (docs/sparsity-method.md §2) and the layer rule that picks one
// of them.
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSE_FUNCTIONS_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSE_FUNCTIONS_H_

#include <torch/types.h>

#include "worker/sparsity/layer_rule.h"

namespace nmsparse {

// The mask (1 kept / `pruned_value` pruned) of a weight under `rule`: per row block (fused qkv), N:M or
// unstructured, with dense blocks all ones.
torch::Tensor LayerMask(const torch::Tensor& weight, const LayerRule& rule, float pruned_value);

// W~ = weight * LayerMask(weight, rule, pruned_value), without autograd, in one pass over the weight on a
// GPU (FillNMSparseWeight). The recipes' autograd functions below build on it.
torch::Tensor SparseWeightOf(const torch::Tensor& weight, const LayerRule& rule, float pruned_value);

// W~ of a layer under `rule` (nullptr or dense: the weight itself), with the rule's autograd semantics:
// - kDecay (STE, MDGF, fine-tune): W~ = W * (mask + D * (1 - mask)); dL/dW = dL/dW~, also at pruned
//   positions.
// - kSrste: W~ = W * mask; dL/dW = g + lambda * (1 - mask) * W with the forward pass's mask. The term is
//   added to whatever gradient reaches W~, which under fp16 loss scaling is scale * g: with the rule's
//   srste_term_scale (the loss scale) the term is multiplied by it, so that unscaling leaves it exact;
//   without, unscaling divides it by the scale (the reference's behaviour, docs/sparsity-method.md §2).
torch::Tensor ApplyLayerRule(const torch::Tensor& weight, const LayerRule* rule);

// The two recipes' autograd semantics with a mask made elsewhere (e.g. semi_structured's transposable 2:4
// mask): W~ = weight * multiplier with the gradient straight through, and SR-STE's W~ = weight * mask
// (binary) with dL/dW = g + lambda * (1 - mask) * W.
torch::Tensor DecayedSparseWeight(const torch::Tensor& weight, const torch::Tensor& multiplier);
// `term_scale` as LayerRule::srste_term_scale (undefined: none).
torch::Tensor SrsteSparseWeight(const torch::Tensor& weight, const torch::Tensor& mask, double lambda,
                                const torch::Tensor& term_scale = torch::Tensor());

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSE_FUNCTIONS_H_
