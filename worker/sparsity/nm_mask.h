// N:M and unstructured magnitude masks (docs/sparsity-method.md §1). Masks are computed on the detached
// weight in fp32 and are never stored: the layers recompute them from the current weight at every forward
// pass.
#ifndef NMSPARSE_WORKER_SPARSITY_NM_MASK_H_
#define NMSPARSE_WORKER_SPARSITY_NM_MASK_H_

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

// Checks that a weight of `shape` can be split into groups of M and that 1 <= N <= M. The error names
// `layer` and its shape, so that a bad config fails before training starts.
absl::Status ValidateNM(const std::string& layer, const std::vector<int64_t>& shape, NM nm);

// The N:M mask of `weight` (same shape and dtype): 1 where kept, `pruned_value` where pruned (0 gives the
// binary mask; D gives the multiplier W~ = W * mask of MDGF in one product). The weight is laid out as
// W (Linear, row), W^T (Linear, col) or W.permute(0,2,3,1) (Conv2d, `is_conv`; `dim` is ignored), viewed as
// [numel/M, M] (groups may straddle rows), and each group keeps the N largest |w|; among equal magnitudes
// the lower index in the group is kept. Throws c10::Error if numel % M != 0 (call ValidateNM first).
torch::Tensor NMMask(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv,
                     float pruned_value = 0.f);

// Writes NMMask(weight, ...) into `out` (a tensor of weight's shape, float32, any strides, e.g. a row slice
// of a larger mask) without allocating a second mask when the layout is row-major. fp32 CUDA weights take
// the fused kernel of cuda/nm_sparse_weight.h (one pass of comparisons per group, on the current stream).
void FillNMMask(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value,
                torch::Tensor out);

// Writes W~ = weight * NMMask(weight, ..., pruned_value) into `out` (weight's shape and dtype, any strides).
// On a GPU (fp32) the mask is never materialised: one kernel reads each group once and writes W~, so SR-STE,
// STE and MDGF's decay multiply cost one pass over the weight. Elsewhere the mask, then the product; the
// values are the same bits either way.
void FillNMSparseWeight(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value,
                        torch::Tensor out);

// The same selection as NMMask's kernels, written with tensor ops (topk on a tie-broken integer key) so that
// it runs on any device: used where no kernel applies (unstructured masks and non-fp32 weights off the CPU).
// `groups` is a contiguous fp32 tensor of any shape whose numel is a multiple of m; returns 1 /
// `pruned_value`.
torch::Tensor SelectTopNWithTensorOps(const torch::Tensor& groups, int64_t n, int64_t m, float pruned_value);

// Unstructured magnitude mask: keeps the int((1 - prune_rate) * numel) largest |w| of the whole tensor
// (computed in double, as the reference does: rate 0.9 of 128 weights keeps 12), ties to the lower flat
// index.
torch::Tensor UnstructuredMask(const torch::Tensor& weight, double prune_rate, float pruned_value = 0.f);

// Number of weights UnstructuredMask keeps.
int64_t UnstructuredKeepCount(int64_t numel, double prune_rate);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_NM_MASK_H_
