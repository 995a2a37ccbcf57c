// The 2:4 primitives of the 2024 recipes (Hu et al., ICML 2024; S-STE; STEP), written once for every recipe
// that uses them (docs/sparsity-method.md §12): the hard 2:4 mask with the authors' tie rule, the
// transposable 2:4 mask in the authors' pattern order, the MVUE 2:4 estimator of the weight gradient and the
// masked decay with its placement. Tensor ops only, so each runs on the CPU (masked dense) and on a GPU
// alike; where a fused CUDA kernel would replace them is said at each function.
#ifndef NMSPARSE_WORKER_SPARSITY_TWO_FOUR_H_
#define NMSPARSE_WORKER_SPARSITY_TWO_FOUR_H_

#include <torch/types.h>

#include <cstdint>

#include "schemas/sparsity_config.h"

namespace nmsparse {

// The eps the authors' MVUE adds to |x| (sparse/utils.py _MVUE24_approx: 1.19209e-07), so that a group of
// zeros still has a distribution and a kept zero divides by a positive probability.
inline constexpr double kMvueEps = 1.19209e-07;

// The hard 2:4 mask (1 kept, 0 pruned, `x`'s shape, fp32) over groups of 4 consecutive elements of the
// flattened row-major `x` (along the last dim of an [out, in] weight): the top 2 |x| of each group under the
// total order (|x|, index), so among equal magnitudes the HIGHER index wins, as the authors' triton
// `_sparse24`. It is NMMask (nm_mask.h, lower index wins) on the reversed tensor, so the CPU loops and the
// CUDA kernel of cuda/nm_sparse_weight.h serve this rule too. x.numel() must be a multiple of 4.
torch::Tensor HardTwoFourMask(const torch::Tensor& x);

// HardTwoFourMask for any N:M: the top n of each group of m consecutive elements, the higher index winning
// among equal magnitudes (Bi-Mask's argsort, whose ties the authors' CPU runs break so). x.numel() must be
// a multiple of m.
torch::Tensor HardNMMask(const torch::Tensor& x, NM nm);

// The transposable 2:4 mask of `weight` [4a, 4b] in the authors' pattern order (first maximum wins): 2 of 4
// kept along every row group and every column group of each 4x4 tile, so both W~ and W~^T are 2:4.
torch::Tensor AuthorsTransposableMask(const torch::Tensor& weight);

// S-STE's 2:4 soft threshold (same groups as HardTwoFourMask): sign(x) max(|x| - t, 0) with t the second
// smallest |x| of the group, so the top 2 keep |x| - t and the rest are 0; continuous in x, and the tie rule
// never shows (tied entries are both t, so both 0).
torch::Tensor SoftThresholdTwoFour(const torch::Tensor& x);

// S-STE's scale beta = <W, S(W)> / <S(W), S(W)> (the least-squares factor from S(W) to W), summed in fp64
// and rounded to fp32 once. The recipe computes it once, from the initial weight, and freezes it.
double SoftThresholdScale(const torch::Tensor& weight);

// MVUE 2:4 of `x` [rows, k] along dim 1: each group of 4 consecutive entries keeps 2, drawn without
// replacement with probability proportional to a = |x| + kMvueEps, and a kept entry is divided by its
// inclusion probability p (InclusionProbability), so E[out] = sign(x) * a. The draw comes from `generator`
// (one fresh sample per call: pass a generator seeded per step so resumes repeat it). A k that is not a
// multiple of 4 leaves a tail of k % 4 entries per row: they are passed through unchanged (exact, so the
// estimate stays unbiased) instead of dropped as the authors' kernel does. Computed in fp64, returned in
// x's dtype. A CUDA kernel (one thread per group, philox draws) would replace the tensor ops here.
torch::Tensor MvueTwoFour(const torch::Tensor& x, torch::Generator generator);

// The inclusion probability of each entry of `x` [rows, 4g] under MvueTwoFour, in fp64 (the closed form
// p_k = t_k + a_k (sum_m t_m / (S - a_m) - t_k / (S - a_k)), t = a / S, S = sum of the group's a).
torch::Tensor MvueInclusionProbability(const torch::Tensor& x);

// The weight gradient of y = x W^T with the MVUE estimate of dY: MVUE(dY^T) X, dY [tokens, out], X
// [tokens, in]. The groups of 4 are 4 consecutive tokens of one output feature (the GEMM's reduction dim),
// never features. On a GPU with cuSPARSELt this GEMM is the third 2:4 GEMM of a sparse linear.
torch::Tensor MvueWeightGradient(const torch::Tensor& grad_output, const torch::Tensor& input,
                                 torch::Generator generator);

// Where the masked decay alpha * W * (1 - mask) joins the gradient; the published recipes differ and one
// SR-STE lambda cannot say which.
enum class MaskedDecaySite {
  kAfterClip,  // In the loop after unscaling and clipping, before the step (Hu et al., GPT-2): never clipped.
  kInOptimizer,  // Inside the optimizer's step, before its update (Hu et al., DeiT with Lion).
  kAutograd,     // Inside the layer's backward, before the batch reduction (Bi-Mask's ViT): scaled by batch.
};

// The factor alpha is multiplied by at `site`: the per-device batch for kAutograd (the term is broadcast
// onto every sample's [in, out] gradient before autograd sums them), 1 elsewhere.
double MaskedDecayScale(MaskedDecaySite site, int64_t batch);

// grad += alpha * weight * (mask == 0), in place (the authors' masked_add_: any non-zero mask entry counts
// as kept). `grad`, `weight` and `mask` have one shape.
void AddMaskedDecay(torch::Tensor& grad, const torch::Tensor& weight, const torch::Tensor& mask,
                    double alpha);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_TWO_FOUR_H_
