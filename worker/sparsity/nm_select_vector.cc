#include "worker/sparsity/nm_select_vector.h"

#define NMSPARSE_LANES_FILE "worker/sparsity/nm_select_vector_lanes.inc"
#include "worker/trainer/kernels/lanes_for_each_isa.inc"

namespace nmsparse {

bool SelectGroupsOnLanes(KernelIsa isa, const float* src, float* dst, int64_t count, int64_t n, int64_t m,
                         float pruned, bool multiply) {
  if (m > 16 || n < 1 || n >= m) return false;  // 16: the widest group a vector holds
#ifdef NMSPARSE_X86
  const int ni = static_cast<int>(n), mi = static_cast<int>(m);
  if (isa == KernelIsa::kAvx512) return avx512::SelectGroups(src, dst, count, ni, mi, pruned, multiply);
  if (isa == KernelIsa::kAvx2) return avx2::SelectGroups(src, dst, count, ni, mi, pruned, multiply);
#else
  (void)isa, (void)src, (void)dst, (void)count, (void)pruned, (void)multiply;
#endif
  return false;
}

}  // namespace nmsparse
