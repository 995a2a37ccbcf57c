// The N:M selection of nm_mask.cc on AVX2 or AVX-512 lanes for groups of 4, 8 and 16 (16 on AVX-512 only):
// every lane's rank within its group from M - 1 in-register rotations, several groups per vector. Keeps
// exactly the weights nm_select::KeptByRank keeps (integer comparisons of the magnitude bits), so the masks
// are the same bits on every path.
#ifndef NMSPARSE_WORKER_SPARSITY_NM_SELECT_VECTOR_H_
#define NMSPARSE_WORKER_SPARSITY_NM_SELECT_VECTOR_H_

#include <cstdint>

#include "worker/trainer/kernels/kernel_isa.h"

namespace nmsparse {

// For `count` values (a multiple of m) forming groups of m, keeps the n (1 <= n < m) largest |src| of each
// group, ties to the lower index: dst = 1 there and `pruned` elsewhere, or, when `multiply`, src times that
// (W~ in the same pass; the same bits as multiplying by the mask afterwards). Returns false, writing nothing,
// where `isa` has no vector path for m; `isa` must not be wider than CpuKernelIsa().
bool SelectGroupsOnLanes(KernelIsa isa, const float* src, float* dst, int64_t count, int64_t n, int64_t m,
                         float pruned, bool multiply);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_NM_SELECT_VECTOR_H_
