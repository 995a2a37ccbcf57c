#include "worker/sparsity/nm_mask.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/sparsity/nm_group_select.h"
#include "worker/sparsity/nm_select_vector.h"
#include "worker/trainer/kernels/kernel_isa.h"

#if defined(NMSPARSE_WITH_CUDA)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "worker/sparsity/cuda/nm_sparse_weight.h"
#endif

namespace nmsparse {
namespace {

using nm_select::MagnitudeBits;

// Larger buffers make SelectByInsertion quadratic; nth_element takes over (e.g. unstructured masks).
constexpr int64_t kMaxInsertionBuffer = 64;

// Every path below keeps, in each group, the n largest |w| with ties going to the lower index, and writes
// 1 (kept) or `pruned`. They differ only in speed: this runs at every forward pass of every sparse layer.

// N = 1: the first maximum of the group.
void SelectArgMax(const float* src, float* dst, int64_t begin, int64_t end, int64_t m, float pruned) {
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    int64_t best = 0;
    int32_t best_mag = MagnitudeBits(in[0]);
    for (int64_t i = 1; i < m; ++i) {
      const int32_t mag = MagnitudeBits(in[i]);
      const bool better = mag > best_mag;  // Selects, not branches: the winner's position is random.
      best_mag = better ? mag : best_mag;
      best = better ? i : best;
    }
    for (int64_t i = 0; i < m; ++i) out[i] = pruned;
    out[best] = 1.f;
  }
}

// N = M - 1: all but the last minimum of the group.
void SelectAllButArgMin(const float* src, float* dst, int64_t begin, int64_t end, int64_t m, float pruned) {
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    int64_t worst = 0;
    int32_t worst_mag = MagnitudeBits(in[0]);
    for (int64_t i = 1; i < m; ++i) {
      const int32_t mag = MagnitudeBits(in[i]);
      const bool worse = mag <= worst_mag;
      worst_mag = worse ? mag : worst_mag;
      worst = worse ? i : worst;
    }
    for (int64_t i = 0; i < m; ++i) out[i] = 1.f;
    out[worst] = pruned;
  }
}

// Small M known at compile time: nm_select's rank test, fully unrolled and vectorised over k.
template <int M>
void SelectByRank(const float* src, float* dst, int64_t begin, int64_t end, int n, float pruned) {
  const float value[2] = {pruned, 1.f};
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * M;
    float* out = dst + g * M;
    int32_t mag[M];
    for (int i = 0; i < M; ++i) mag[i] = MagnitudeBits(in[i]);
    // A load, not a branch: kept/pruned is a coin flip for 2:4.
    for (int i = 0; i < M; ++i) out[i] = value[nm_select::KeptByRank(mag, M, n, i)];
  }
}

// Medium M known at compile time: nm_select's bit-by-bit threshold (31 fixed-length counting passes, which
// the compiler vectorises), then |w| above it and the first ties.
template <int M>
void SelectByBisection(const float* src, float* dst, int64_t begin, int64_t end, int n, float pruned) {
  const float value[2] = {pruned, 1.f};
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * M;
    float* out = dst + g * M;
    int32_t bits[M];
    for (int i = 0; i < M; ++i) bits[i] = MagnitudeBits(in[i]);
    nm_select::SelectAboveThreshold(bits, M, n, nm_select::NthLargestBits(bits, M, n),
                                    [&](int i, bool kept) { out[i] = value[kept]; });
  }
}

// Any M: the n-th largest magnitude t by nth_element, then keep |w| > t and the first (n - #{|w| > t})
// elements with |w| == t.
void SelectByThreshold(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                       float pruned) {
  std::vector<int32_t> mag(m);
  std::vector<int32_t> scratch(m);
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    for (int64_t i = 0; i < m; ++i) mag[i] = MagnitudeBits(in[i]);
    scratch = mag;
    std::nth_element(scratch.begin(), scratch.begin() + (n - 1), scratch.end(), std::greater<int32_t>());
    const int32_t threshold = scratch[n - 1];
    int64_t above = 0;
    for (int64_t i = 0; i < m; ++i) above += mag[i] > threshold;
    int64_t ties_left = n - above;
    for (int64_t i = 0; i < m; ++i) {
      const bool tie = mag[i] == threshold && ties_left > 0;
      ties_left -= tie;
      out[i] = (mag[i] > threshold || tie) ? 1.f : pruned;
    }
  }
}

// One pass per group with a sorted buffer of k = min(n, m - n) elements: the n best when kKeep (n <= m/2),
// else the m - n worst. Elements arrive in index order, so a newcomer ranks below equal magnitudes already
// in the buffer. Once the buffer is full most elements are rejected by one comparison.
template <bool kKeep>
void SelectByInsertion(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                       float pruned) {
  const int64_t k = kKeep ? n : m - n;
  std::vector<int32_t> mags(k);
  std::vector<int64_t> index(k);
  // Keep side: best first, (|w| desc, index asc). Worst side: worst first, (|w| asc, index desc).
  auto before = [](int32_t mag, int32_t other) { return kKeep ? mag > other : mag <= other; };
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    int64_t size = 0;
    int32_t bar = 0;  // mags[k - 1] once the buffer is full.
    for (int64_t i = 0; i < m; ++i) {
      const int32_t mag = MagnitudeBits(in[i]);
      int64_t pos;
      if (size == k) {
        if (!before(mag, bar)) continue;
        pos = k - 1;
      } else {
        pos = size++;
      }
      for (; pos > 0 && before(mag, mags[pos - 1]); --pos) {
        mags[pos] = mags[pos - 1];
        index[pos] = index[pos - 1];
      }
      mags[pos] = mag;
      index[pos] = i;
      bar = mags[k - 1];
    }
    std::fill(out, out + m, kKeep ? pruned : 1.f);
    for (int64_t j = 0; j < k; ++j) out[index[j]] = kKeep ? 1.f : pruned;
  }
}

void SelectGroupsScalar(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                        float pruned) {
  if (n == 1) return SelectArgMax(src, dst, begin, end, m, pruned);
  if (n == m - 1) return SelectAllButArgMin(src, dst, begin, end, m, pruned);
  switch (m) {
    case 4:
      return SelectByRank<4>(src, dst, begin, end, static_cast<int>(n), pruned);
    case 8:
      return SelectByRank<8>(src, dst, begin, end, static_cast<int>(n), pruned);
    case 16:
      return SelectByRank<16>(src, dst, begin, end, static_cast<int>(n), pruned);
    case 32:
      return SelectByBisection<32>(src, dst, begin, end, static_cast<int>(n), pruned);
    case 64:
      return SelectByBisection<64>(src, dst, begin, end, static_cast<int>(n), pruned);
    case 128:
      return SelectByBisection<128>(src, dst, begin, end, static_cast<int>(n), pruned);
    default:
      break;
  }
  if (n <= kMaxInsertionBuffer && n <= m - n)
    return SelectByInsertion<true>(src, dst, begin, end, n, m, pruned);
  if (m - n <= kMaxInsertionBuffer) return SelectByInsertion<false>(src, dst, begin, end, n, m, pruned);
  return SelectByThreshold(src, dst, begin, end, n, m, pruned);
}

// Groups [begin, end): on the CPU's vector lanes where they hold the group size (nm_select_vector.h), else
// by the scalar paths above, then the product with src while the block is in cache.
void SelectGroups(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                  float pruned, bool multiply) {
  const int64_t first = begin * m, count = (end - begin) * m;
  if (SelectGroupsOnLanes(ActiveKernelIsa(), src + first, dst + first, count, n, m, pruned, multiply)) return;
  SelectGroupsScalar(src, dst, begin, end, n, m, pruned);
  if (!multiply) return;
  for (int64_t i = first; i < first + count; ++i) dst[i] *= src[i];
}

// Keeps the n largest |src| of every group of m consecutive elements: dst = 1 there, `pruned` elsewhere, or
// src times that when `multiply`.
void SelectTopN(const float* src, float* dst, int64_t numel, int64_t n, int64_t m, float pruned,
                bool multiply = false) {
  if (n >= m || n <= 0) {
    const float value = n >= m ? 1.f : pruned;
    for (int64_t i = 0; i < numel; ++i) dst[i] = multiply ? src[i] * value : value;
    return;
  }
  const int64_t groups = numel / m;
  const int64_t grain = std::max<int64_t>(1, 32768 / m);
  at::parallel_for(0, groups, grain, [&](int64_t begin, int64_t end) {
    SelectGroups(src, dst, begin, end, n, m, pruned, multiply);
  });
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// `t` (the weight, or a mask or W~ of its shape) seen in group order, without a copy: consecutive elements
// of this view form the groups (docs/sparsity-method.md §1).
torch::Tensor GroupView(const torch::Tensor& t, SparseDim dim, bool is_conv) {
  if (is_conv) {
    TORCH_CHECK(t.dim() == 4, "conv weight must be [O, I, kh, kw], got ", t.sizes());
    return t.permute({0, 2, 3, 1});
  }
  TORCH_CHECK(t.dim() == 2, "linear weight must be [out, in], got ", t.sizes());
  return dim == SparseDim::kCol ? t.t() : t;
}

// The buffer whose consecutive elements form the groups, as a contiguous fp32 tensor.
torch::Tensor GroupBuffer(const torch::Tensor& w, SparseDim dim, bool is_conv) {
  return GroupView(w.detach().to(torch::kFloat), dim, is_conv).contiguous();
}

// Undoes GroupBuffer's layout on a mask.
torch::Tensor FromGroupLayout(const torch::Tensor& mask, SparseDim dim, bool is_conv) {
  if (is_conv) return mask.permute({0, 3, 1, 2});
  return dim == SparseDim::kCol ? mask.t() : mask;
}

void CheckGroupable(const torch::Tensor& weight, NM nm, const torch::Tensor& out) {
  TORCH_CHECK(nm.m >= 1 && weight.numel() % nm.m == 0, "weight of shape ", weight.sizes(),
              " cannot be split into groups of M=", nm.m);
  TORCH_CHECK(out.sizes() == weight.sizes(), "mask output must have the weight's shape");
}

// SelectTopN of a CPU group buffer into `out` (float32, the weight's shape): in place where out's rows are
// the groups, else through a buffer in group layout.
void SelectOnCpu(const torch::Tensor& buffer, NM nm, SparseDim dim, bool is_conv, float pruned_value,
                 bool multiply, torch::Tensor& out) {
  const bool direct = !is_conv && dim == SparseDim::kRow && out.is_contiguous() && out.is_cpu();
  torch::Tensor target = direct ? out : torch::empty_like(buffer);
  SelectTopN(buffer.data_ptr<float>(), target.data_ptr<float>(), buffer.numel(), nm.n, nm.m, pruned_value,
             multiply);
  if (!direct) out.copy_(FromGroupLayout(target, dim, is_conv));
}

#if defined(NMSPARSE_WITH_CUDA)
cuda::GroupLayout LayoutOf(const torch::Tensor& view) {
  cuda::GroupLayout layout;
  TORCH_CHECK(view.dim() <= cuda::GroupLayout::kMaxDims, "at most 4 dimensions, got ", view.sizes());
  layout.dims = static_cast<int>(view.dim());
  for (int d = 0; d < layout.dims; ++d) {
    layout.sizes[d] = view.size(d);
    layout.strides[d] = view.stride(d);
  }
  return layout;
}

// The fused kernel for fp32 CUDA tensors (the GPU nodes' weights); false when it does not apply.
bool FillOnGpu(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value,
               bool multiply, torch::Tensor& out) {
  if (!weight.is_cuda() || !out.is_cuda() || weight.scalar_type() != torch::kFloat ||
      out.scalar_type() != torch::kFloat || nm.n < 1 || nm.n >= nm.m) {
    return false;
  }
  const c10::cuda::CUDAGuard guard(weight.device());
  cuda::NMSparseWeightArgs args;
  args.weight = weight.data_ptr<float>();
  args.weight_layout = LayoutOf(GroupView(weight, dim, is_conv));
  args.out = out.data_ptr<float>();
  args.out_layout = LayoutOf(GroupView(out, dim, is_conv));
  args.numel = weight.numel();
  args.n = static_cast<int>(nm.n);
  args.m = static_cast<int>(nm.m);
  args.pruned_value = pruned_value;
  args.multiply = multiply;
  const std::string error = cuda::LaunchNMSparseWeight(args, c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(error.empty(), "N:M mask kernel: ", error);
  return true;
}
#else
bool FillOnGpu(const torch::Tensor&, NM, SparseDim, bool, float, bool, torch::Tensor&) { return false; }
#endif

}  // namespace

torch::Tensor SelectTopNWithTensorOps(const torch::Tensor& groups, int64_t n, int64_t m, float pruned_value) {
  torch::NoGradGuard no_grad;
  if (n >= m) return torch::ones_like(groups);
  if (n <= 0) return torch::full_like(groups, pruned_value);
  // Magnitude bits as the kernels use them (sign cleared; NaN above infinity). key = bits * m + (m - 1 -
  // index) breaks ties towards the lower index and makes every key in a group distinct, so topk's own tie
  // order does not matter.
  const torch::Tensor bits =
      groups.contiguous().view(torch::kInt32).bitwise_and(0x7fffffff).to(torch::kInt64).view({-1, m});
  const torch::Tensor reverse_index = torch::arange(m - 1, -1, -1, bits.options());
  const torch::Tensor top = std::get<1>((bits * m + reverse_index)
                                            .topk(n, /*dim=*/1, /*largest=*/true,
                                                  /*sorted=*/false));
  torch::Tensor mask = torch::full({bits.size(0), m}, pruned_value, groups.options());
  mask.scatter_(1, top, 1.f);
  return mask.view(groups.sizes());
}

absl::Status ValidateNM(const std::string& layer, const std::vector<int64_t>& shape, NM nm) {
  if (nm.m < 1 || nm.n < 1 || nm.n > nm.m) {
    return absl::InvalidArgumentError(absl::StrCat("layer ", layer, " ", ShapeString(shape), ": N:M ", nm.n,
                                                   ":", nm.m, " is invalid (need 1 <= N <= M)"));
  }
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel % nm.m != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer ", layer, " with weight shape ", ShapeString(shape), " (", numel,
                     " weights) cannot be split into groups of M=", nm.m, " for N:M ", nm.n, ":", nm.m));
  }
  return absl::OkStatus();
}

void FillNMMask(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value,
                torch::Tensor out) {
  CheckGroupable(weight, nm, out);
  TORCH_CHECK(out.scalar_type() == torch::kFloat, "mask output must be float32");
  torch::NoGradGuard no_grad;
  if (FillOnGpu(weight.detach(), nm, dim, is_conv, pruned_value, /*multiply=*/false, out)) return;
  const torch::Tensor buffer = GroupBuffer(weight, dim, is_conv);
  if (!buffer.is_cpu()) {
    out.copy_(FromGroupLayout(SelectTopNWithTensorOps(buffer, nm.n, nm.m, pruned_value), dim, is_conv));
    return;
  }
  SelectOnCpu(buffer, nm, dim, is_conv, pruned_value, /*multiply=*/false, out);
}

void FillNMSparseWeight(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value,
                        torch::Tensor out) {
  CheckGroupable(weight, nm, out);
  torch::NoGradGuard no_grad;
  if (FillOnGpu(weight.detach(), nm, dim, is_conv, pruned_value, /*multiply=*/true, out)) return;
  if (weight.is_cpu() && weight.scalar_type() == torch::kFloat && out.is_cpu() &&
      out.scalar_type() == torch::kFloat && !out.is_alias_of(weight)) {
    // W~ in the selection's pass: w * 1.f or w * pruned, the bits mul_out would give.
    SelectOnCpu(GroupBuffer(weight, dim, is_conv), nm, dim, is_conv, pruned_value, /*multiply=*/true, out);
    return;
  }
  torch::Tensor mask = torch::empty(weight.sizes(), weight.options().dtype(torch::kFloat));
  FillNMMask(weight, nm, dim, is_conv, pruned_value, mask);
  torch::mul_out(out, weight.detach(), mask.to(weight.scalar_type()));
}

torch::Tensor NMMask(const torch::Tensor& weight, NM nm, SparseDim dim, bool is_conv, float pruned_value) {
  torch::Tensor out = torch::empty(weight.sizes(), weight.options().dtype(torch::kFloat));
  FillNMMask(weight, nm, dim, is_conv, pruned_value, out);
  return out.to(weight.scalar_type());
}

int64_t UnstructuredKeepCount(int64_t numel, double prune_rate) {
  return static_cast<int64_t>((1.0 - prune_rate) * static_cast<double>(numel));
}

torch::Tensor UnstructuredMask(const torch::Tensor& weight, double prune_rate, float pruned_value) {
  torch::NoGradGuard no_grad;
  const torch::Tensor buffer = weight.detach().to(torch::kFloat).contiguous();
  torch::Tensor out = torch::empty_like(buffer);
  const int64_t numel = buffer.numel();
  if (numel == 0) return out.to(weight.scalar_type());
  const int64_t keep = UnstructuredKeepCount(numel, prune_rate);
  if (!buffer.is_cpu())
    return SelectTopNWithTensorOps(buffer, keep, numel, pruned_value).to(weight.scalar_type());
  SelectTopN(buffer.data_ptr<float>(), out.data_ptr<float>(), numel, keep, numel, pruned_value);
  return out.to(weight.scalar_type());
}

}  // namespace nmsparse
