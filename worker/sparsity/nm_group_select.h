// The selection inside one group of an N:M mask (docs/sparsity-method.md §1): keep the n largest |w| of m,
// ties to the lower index. One definition for the CPU kernels (nm_mask.cc) and the CUDA kernel
// (cuda/nm_sparse_weight.cu), so that the GPU keeps exactly the weights the CPU keeps and the CPU tests check
// both. Plain C++ (no LibTorch): nvcc compiles it without Torch's headers.
#ifndef NMSPARSE_WORKER_SPARSITY_NM_GROUP_SELECT_H_
#define NMSPARSE_WORKER_SPARSITY_NM_GROUP_SELECT_H_

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define NMSPARSE_HOST_DEVICE __host__ __device__
#else
#define NMSPARSE_HOST_DEVICE
#endif

namespace nmsparse::nm_select {

// |v| as its IEEE bit pattern without the sign: integers that order magnitudes exactly like the floats do,
// compare faster and vectorise, and put NaN (a diverged weight) above infinity, so orderings stay strict.
NMSPARSE_HOST_DEVICE inline int32_t MagnitudeBits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(v) & 0x7fffffff;
#else
  int32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits & 0x7fffffff;
#endif
}

// Whether element i of a group with magnitudes `bits` (any indexable of m int32) is among the n kept: fewer
// than n elements outrank it (a larger magnitude, or an equal one at a lower index). Branch-free with a fixed
// trip count, so that compilers vectorise it over k; O(m) per element, for small m.
template <typename Bits>
NMSPARSE_HOST_DEVICE inline bool KeptByRank(const Bits& bits, int m, int n, int i) {
  int rank = 0;
  for (int k = 0; k < m; ++k) rank += (bits[k] > bits[i]) | ((bits[k] == bits[i]) & (k < i));
  return rank < n;
}

// The n-th largest magnitude t of a group (any indexable of m int32), built bit by bit from the top: the
// largest t with #{bits >= t} >= n. 31 fixed-length counting passes, O(31 m) per group, for larger m.
template <typename Bits>
NMSPARSE_HOST_DEVICE inline int32_t NthLargestBits(const Bits& bits, int m, int n) {
  int32_t threshold = 0;
  for (int b = 30; b >= 0; --b) {
    const int32_t candidate = threshold | (int32_t{1} << b);
    int count = 0;
    for (int i = 0; i < m; ++i) count += bits[i] >= candidate;
    if (count >= n) threshold = candidate;
  }
  return threshold;
}

// Calls keep(i, kept) for i = 0..m-1 in order, given the group's n-th largest magnitude `threshold`: keeps
// every |w| > t and the first (n - #{|w| > t}) of those equal to t.
template <typename Bits, typename Keep>
NMSPARSE_HOST_DEVICE inline void SelectAboveThreshold(const Bits& bits, int m, int n, int32_t threshold,
                                                      Keep keep) {
  int above = 0;
  for (int i = 0; i < m; ++i) above += bits[i] > threshold;
  int ties_left = n - above;
  for (int i = 0; i < m; ++i) {
    const bool tie = (bits[i] == threshold) & (ties_left > 0);
    ties_left -= tie;
    keep(i, (bits[i] > threshold) | tie);
  }
}

// The whole selection of one group, for any 1 <= n < m: by rank for m <= kMaxRankGroup, else by threshold.
// Both keep the same set; they differ only in cost.
constexpr int kMaxRankGroup = 16;

template <typename Bits, typename Keep>
NMSPARSE_HOST_DEVICE inline void SelectGroup(const Bits& bits, int m, int n, Keep keep) {
  if (m <= kMaxRankGroup) {
    for (int i = 0; i < m; ++i) keep(i, KeptByRank(bits, m, n, i));
    return;
  }
  SelectAboveThreshold(bits, m, n, NthLargestBits(bits, m, n), keep);
}

}  // namespace nmsparse::nm_select

#endif  // NMSPARSE_WORKER_SPARSITY_NM_GROUP_SELECT_H_
