#include <cuda_runtime.h>

#include <algorithm>

#include "worker/sparsity/cuda/nm_sparse_weight.h"
#include "worker/sparsity/nm_group_select.h"

namespace nmsparse::cuda {
namespace {

constexpr int kThreads = 256;

__device__ int64_t ElementOffset(const GroupLayout& layout, int64_t j) {
  int64_t offset = 0;
  for (int d = layout.dims - 1; d >= 0; --d) {
    offset += (j % layout.sizes[d]) * layout.strides[d];
    j /= layout.sizes[d];
  }
  return offset;
}

__device__ float Written(const NMSparseWeightArgs& a, float w, bool kept) {
  const float value = kept ? 1.f : a.pruned_value;
  return a.multiply ? w * value : value;  // The CPU path's product, bit for bit.
}

// The common case: a 2-D layout [rows, cols] with groups inside rows (cols % kM == 0), kM known at compile
// time so that a group lives in registers. Consecutive threads take the neighbours along the dimension of
// unit stride, so that a warp's loads are coalesced for row and column grouping alike.
template <int kM>
__global__ void NMSparseWeight2D(NMSparseWeightArgs a, int64_t rows, int64_t col_groups, bool rows_fastest) {
  const GroupLayout& in = a.weight_layout;
  const GroupLayout& out = a.out_layout;
  const int64_t groups = rows * col_groups;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = rows_fastest ? g % rows : g / col_groups;
    const int64_t c = (rows_fastest ? g / rows : g % col_groups) * kM;
    const float* src = a.weight + r * in.strides[0] + c * in.strides[1];
    float* dst = a.out + r * out.strides[0] + c * out.strides[1];
    float w[kM];
    int32_t bits[kM];
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      w[i] = src[i * in.strides[1]];
      bits[i] = nm_select::MagnitudeBits(w[i]);
    }
    nm_select::SelectGroup(bits, kM, a.n,
                           [&](int i, bool kept) { dst[i * out.strides[1]] = Written(a, w[i], kept); });
  }
}

// Any layout and any m (groups may straddle rows, convolutions): reads through the layout, from L1/L2 on
// the repeated passes of the threshold search.
struct LayoutBits {
  const NMSparseWeightArgs* a;
  int64_t first;
  __device__ int32_t operator[](int i) const {
    return nm_select::MagnitudeBits(a->weight[ElementOffset(a->weight_layout, first + i)]);
  }
};

__global__ void NMSparseWeightAnyLayout(NMSparseWeightArgs a) {
  const int64_t groups = a.numel / a.m;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const LayoutBits bits{&a, g * a.m};
    nm_select::SelectGroup(bits, a.m, a.n, [&](int i, bool kept) {
      const int64_t j = g * a.m + i;
      a.out[ElementOffset(a.out_layout, j)] = Written(a, a.weight[ElementOffset(a.weight_layout, j)], kept);
    });
  }
}

int Blocks(int64_t groups) {
  // Enough blocks to fill any current GPU several times over; the grid-stride loops cover the rest.
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((groups + kThreads - 1) / kThreads, 65536)));
}

bool SameSizes(const GroupLayout& x, const GroupLayout& y) {
  if (x.dims != y.dims) return false;
  for (int d = 0; d < x.dims; ++d) {
    if (x.sizes[d] != y.sizes[d]) return false;
  }
  return true;
}

template <int kM>
void Launch2D(const NMSparseWeightArgs& a, cudaStream_t stream) {
  const int64_t rows = a.weight_layout.sizes[0];
  const int64_t col_groups = a.weight_layout.sizes[1] / kM;
  const bool rows_fastest = a.weight_layout.strides[1] != 1;
  NMSparseWeight2D<kM><<<Blocks(rows * col_groups), kThreads, 0, stream>>>(a, rows, col_groups, rows_fastest);
}

}  // namespace

std::string LaunchNMSparseWeight(const NMSparseWeightArgs& a, void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  const bool two_d = a.weight_layout.dims == 2 && SameSizes(a.weight_layout, a.out_layout) &&
                     a.weight_layout.sizes[1] % a.m == 0;
  if (two_d && a.m == 4) {
    Launch2D<4>(a, stream);
  } else if (two_d && a.m == 8) {
    Launch2D<8>(a, stream);
  } else if (two_d && a.m == 16) {
    Launch2D<16>(a, stream);
  } else if (two_d && a.m == 32) {
    Launch2D<32>(a, stream);
  } else if (a.numel > 0) {
    NMSparseWeightAnyLayout<<<Blocks(a.numel / a.m), kThreads, 0, stream>>>(a);
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? std::string() : std::string(cudaGetErrorString(error));
}

}  // namespace nmsparse::cuda
