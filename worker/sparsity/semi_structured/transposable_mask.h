// A transposable 2:4 mask: in every 4x4 tile of the weight, 2 of 4 kept along rows and along columns, the
// pattern of the 90 such that keeps the largest sum of |w| (as torchao's tile prune). W~ and W~^T are then
// both 2:4 along their inner dimension, so the input-gradient GEMM dY @ W~ can use the sparse kernel too. It
// is a different mask from the engine's (a change to the method: docs/accelerated-2-4.md).
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TRANSPOSABLE_MASK_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TRANSPOSABLE_MASK_H_

#include <torch/types.h>

namespace nmsparse {

// The order the 90 patterns are searched in, which decides ties (the first maximal pattern wins).
enum class TransposableOrder {
  kEnumeration,  // Row choices in nested loops (row 0 outermost): the accelerated 2:4 layers' mask.
  // Descending lexicographic on the row-major 16-vector: the order of Hu et al.'s 16x90 pattern matrix and
  // triton list (huyz2023/2by4-pretrain@9e330125, sparse/legacy.py transposable_sparse), so that ties go
  // where the authors' code sends them.
  kAuthors,
};

// The mask of `weight` [out, in] (both multiples of 4) as fp32 on the weight's device: 1 kept, 0 pruned.
// Tensor ops only, so it runs on any device, with no host synchronisation once the device's tables exist
// (PrepareTransposableMask). A pattern's score is the sum of its 8 |w| in fp32, added in a fixed order by
// element-wise ops (no GEMM): autocast and TF32 cannot lower it, so bf16-autocast and fp32 runs, CPU and GPU,
// choose the same mask. Among equally good patterns the first in `order` wins.
torch::Tensor TransposableTwoFourMask(const torch::Tensor& weight,
                                      TransposableOrder order = TransposableOrder::kEnumeration);

// Makes the pattern tables on `device` (once per device and process; a blocking host-to-device copy), so that
// no training step does. SemiStructuredLayers::Prepare calls it before step 1.
void PrepareTransposableMask(const torch::Device& device);

// The 90 patterns, [90, 16] fp32 (row-major 4x4 tiles), in `order`, on the CPU.
torch::Tensor TransposableTwoFourPatterns(TransposableOrder order = TransposableOrder::kEnumeration);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TRANSPOSABLE_MASK_H_
