// The two masks of Bi-Mask (Zhang et al., "Bi-directional Masks for Efficient N:M Sparse Training", ICML
// 2023; docs/sparsity-method.md §14) and its permutation search, as the authors' DeiT code computes them
// (zyxxmu/Bi-Mask@e63cd37f, DeiT/timm/models/vision_transformer.py). All on a weight W [out, in] in
// nn.Linear layout (the authors store the masks transposed, [in, out]); tensor ops only, so each runs where
// the weight lives, and no result is read by the host.
#ifndef NMSPARSE_WORKER_SPARSITY_BIMASK_MASKS_H_
#define NMSPARSE_WORKER_SPARSITY_BIMASK_MASKS_H_

#include <torch/types.h>

#include <cstdint>

#include "schemas/sparsity_config.h"

namespace nmsparse {

// The authors' number of random permutations scored at each search (G).
inline constexpr int64_t kBimaskCandidates = 100;

// The forward mask (fp32 0/1, W's shape): the top N |W| of every group of M consecutive in-features of each
// output row, the higher index winning ties (HardNMMask).
torch::Tensor BimaskForwardMask(const torch::Tensor& weight, NM nm);

// The backward mask under `permutation` (int64 [out], row i of the permuted weight is row permutation[i]):
// the top N |W * forward| of every group of M consecutive permuted output rows, per input column, AND the
// forward mask, scattered back to the original rows. A subset of the forward mask, N:M along the permuted
// output dimension, so dX = dY (W * backward) has N:M along the other dimension.
torch::Tensor BimaskBackwardMask(const torch::Tensor& weight, const torch::Tensor& forward_mask,
                                 const torch::Tensor& permutation, NM nm);

// The number of weights the forward and backward masks both keep under each of `candidates` (int64
// [G, out]): the search's scores ([G], fp32, exact integers).
torch::Tensor BimaskPermutationScores(const torch::Tensor& weight, const torch::Tensor& candidates, NM nm);

// The search's choice: the first candidate with the largest score (the authors' strict "greater than"), or
// the identity when every score is 0 (the identity itself is never scored). A device tensor [out].
torch::Tensor BimaskBestPermutation(const torch::Tensor& weight, const torch::Tensor& candidates, NM nm);

// kBimaskCandidates random permutations of `rows` (int64 [G, rows], on the CPU) drawn from `seed`, in place
// of the authors' numpy global RNG, so that a run's searches depend on its seed alone.
torch::Tensor BimaskCandidates(int64_t rows, uint64_t seed);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_BIMASK_MASKS_H_
