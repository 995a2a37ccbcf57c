// The CUDA kernel behind N:M masks and W~ on a GPU (docs/sparsity-method.md §1, §2): one pass over the weight
// in which every thread selects one group with the comparisons of nm_group_select.h and writes either the
// mask (1 kept, `pruned_value` pruned) or W~ = w * that value. No sort or topk over groups, no temporary, no
// host synchronisation: launched on the caller's stream. Plain C++ so that it needs no LibTorch header
// (nm_mask.cc turns tensors into these arguments).
#ifndef NMSPARSE_WORKER_SPARSITY_CUDA_NM_SPARSE_WEIGHT_H_
#define NMSPARSE_WORKER_SPARSITY_CUDA_NM_SPARSE_WEIGHT_H_

#include <cstdint>
#include <string>

namespace nmsparse::cuda {

// A tensor seen in group order: element j of the group buffer (whose consecutive runs of m are the groups)
// sits at sum_d index_d(j) * strides[d], where index(j) unravels j over sizes[0..dims) row-major. A row-major
// Linear weight is {[out, in], [in, 1]}; the column grouping is its transpose {[in, out], [1, in]}; a Conv2d
// weight [O, I, kh, kw] groups along I: {[O, kh, kw, I], [I*kh*kw, kw, 1, kh*kw]}.
struct GroupLayout {
  static constexpr int kMaxDims = 4;
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

struct NMSparseWeightArgs {
  const float* weight = nullptr;
  GroupLayout weight_layout;
  float* out = nullptr;  // May alias nothing the kernel reads.
  GroupLayout out_layout;
  int64_t numel = 0;  // A multiple of m.
  int n = 0, m = 0;   // 1 <= n < m (the caller fills n >= m and n <= 0 itself).
  float pruned_value = 0.f;
  bool multiply = false;  // true: out = w * (kept ? 1 : pruned_value), W~; false: the mask itself.
};

// Launches the kernel on `stream` (a cudaStream_t). Returns "" or the CUDA launch error's text.
std::string LaunchNMSparseWeight(const NMSparseWeightArgs& args, void* stream);

}  // namespace nmsparse::cuda

#endif  // NMSPARSE_WORKER_SPARSITY_CUDA_NM_SPARSE_WEIGHT_H_
