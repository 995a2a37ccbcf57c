// Mask arithmetic of dynamic unstructured sparsity (docs/sparsity-method.md §7): initial masks,
// magnitude re-pruning (GMP) and drop/grow (SET, RigL), each run independently in equal blocks of output rows
// and/or input columns (balance_out_groups / balance_in_groups) with equal counts per block. Masks are float
// tensors of the weight's shape, 1 = active.
#ifndef NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_MASK_H_
#define NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_MASK_H_

#include <torch/torch.h>

#include <cstdint>

namespace nmsparse {
namespace dynamic {

// How a weight is split into blocks: out_groups equal groups of dim 0 times in_groups equal groups of the
// remaining dimensions flattened (a conv's in_chans * kh * kw). 0 and 1 both mean one group.
struct Blocks {
  int64_t out_groups = 1;
  int64_t in_groups = 1;
};

// [blocks, block_size] copy of `t` grouped by `b`, and back. Requires the groups to divide the dimensions.
torch::Tensor ToBlocks(const torch::Tensor& t, const Blocks& b);
torch::Tensor FromBlocks(const torch::Tensor& blocks, torch::IntArrayRef shape, const Blocks& b);

// Active weights per block for a sparsity: block_size - round(sparsity * block_size).
int64_t ActivePerBlock(int64_t block_size, double sparsity);

// Per row of `scores` [blocks, size], 1 at the k largest (ties by index, lowest first) and 0 elsewhere.
torch::Tensor TopKRows(const torch::Tensor& scores, int64_t k);
// The same with `k` a device tensor that broadcasts against [blocks, 1] (one count, or one per row): no host
// read.
torch::Tensor RanksBelow(const torch::Tensor& scores, const torch::Tensor& k);

enum class Init { kRandom, kTopk, kFromZeros };

// The initial mask for `sparsity`: random, the largest |W|, or from_zeros (weights already exactly zero are
// pruned first, the rest chosen at random).
torch::Tensor InitialMask(const torch::Tensor& weight, double sparsity, Init init, const Blocks& b,
                          uint64_t seed);

// GMP: the largest |W| among the active weights (inactive ones only when more are needed), `sparsity` pruned.
torch::Tensor PruneByMagnitude(const torch::Tensor& weight, const torch::Tensor& mask, double sparsity,
                               const Blocks& b);

// SET / RigL: keep the largest active |W| and grow the rest of the scheduled active count where
// `grow_score` is largest among the weights not kept (random scores for SET, |dense gradient| for RigL).
// Per block: active = ActivePerBlock(sparsity), grown = round(drop_fraction * min(active, currently
// active)), kept = active - grown.
torch::Tensor DropAndGrow(const torch::Tensor& weight, const torch::Tensor& mask,
                          const torch::Tensor& grow_score, double sparsity, double drop_fraction,
                          const Blocks& b);

// Uniform [0, 1) scores of `like`'s shape from a generator seeded with `seed`.
torch::Tensor RandomScores(const torch::Tensor& like, uint64_t seed);

}  // namespace dynamic
}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_MASK_H_
