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

namespace nmsparse {
namespace {

// |v| as its IEEE bit pattern without the sign: integers that order magnitudes exactly like the floats do,
// compare faster and vectorise, and put NaN (a diverged weight) above infinity, so orderings stay strict.
inline int32_t Magnitude(float v) {
  int32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits & 0x7fffffff;
}

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
    int32_t best_mag = Magnitude(in[0]);
    for (int64_t i = 1; i < m; ++i) {
      const int32_t mag = Magnitude(in[i]);
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
    int32_t worst_mag = Magnitude(in[0]);
    for (int64_t i = 1; i < m; ++i) {
      const int32_t mag = Magnitude(in[i]);
      const bool worse = mag <= worst_mag;
      worst_mag = worse ? mag : worst_mag;
      worst = worse ? i : worst;
    }
    for (int64_t i = 0; i < m; ++i) out[i] = 1.f;
    out[worst] = pruned;
  }
}

// Small M known at compile time: the rank of element i is the number of elements that outrank it (larger
// magnitude, or equal magnitude at a lower index); branch-free and fully unrolled.
template <int M>
void SelectByRank(const float* src, float* dst, int64_t begin, int64_t end, int n, float pruned) {
  const float value[2] = {pruned, 1.f};
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * M;
    float* out = dst + g * M;
    int32_t mag[M];
    for (int i = 0; i < M; ++i) mag[i] = Magnitude(in[i]);
    for (int i = 0; i < M; ++i) {
      // Fixed trip count and no branches, so that the compiler can vectorise over k.
      int rank = 0;
      for (int k = 0; k < M; ++k) rank += (mag[k] > mag[i]) | ((mag[k] == mag[i]) & (k < i));
      out[i] = value[rank < n];  // A load, not a branch: kept/pruned is a coin flip for 2:4.
    }
  }
}

// Medium M known at compile time: the n-th largest magnitude t found bit by bit (31 fixed-length counting
// passes over the magnitude bits, which the compiler vectorises);
// then keep |w| > t and the first (n - #{|w| > t}) elements with |w| == t.
template <int M>
void SelectByBisection(const float* src, float* dst, int64_t begin, int64_t end, int n, float pruned) {
  const float value[2] = {pruned, 1.f};
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * M;
    float* out = dst + g * M;
    int32_t bits[M];
    for (int i = 0; i < M; ++i) bits[i] = Magnitude(in[i]);
    int32_t threshold = 0;  // Largest t with #{bits >= t} >= n, built from the top bit down.
    for (int b = 30; b >= 0; --b) {
      const int32_t candidate = threshold | (int32_t{1} << b);
      int count = 0;
      for (int i = 0; i < M; ++i) count += bits[i] >= candidate;
      if (count >= n) threshold = candidate;
    }
    int above = 0;
    for (int i = 0; i < M; ++i) above += bits[i] > threshold;
    int ties_left = n - above;
    for (int i = 0; i < M; ++i) {
      const bool tie = (bits[i] == threshold) & (ties_left > 0);
      ties_left -= tie;
      out[i] = value[(bits[i] > threshold) | tie];
    }
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
    for (int64_t i = 0; i < m; ++i) mag[i] = Magnitude(in[i]);
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
      const int32_t mag = Magnitude(in[i]);
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

void SelectGroups(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
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

// Keeps the n largest |src| of every group of m consecutive elements: dst = 1 there, `pruned` elsewhere.
void SelectTopN(const float* src, float* dst, int64_t numel, int64_t n, int64_t m, float pruned) {
  if (n >= m) {
    std::fill(dst, dst + numel, 1.f);
    return;
  }
  if (n <= 0) {
    std::fill(dst, dst + numel, pruned);
    return;
  }
  const int64_t groups = numel / m;
  const int64_t grain = std::max<int64_t>(1, 32768 / m);
  at::parallel_for(0, groups, grain,
                   [&](int64_t begin, int64_t end) { SelectGroups(src, dst, begin, end, n, m, pruned); });
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// The buffer whose consecutive elements form the groups (spec §1), as a contiguous fp32 tensor.
torch::Tensor GroupBuffer(const torch::Tensor& w, SparseDim dim, bool is_conv) {
  torch::Tensor f = w.detach().to(torch::kFloat);
  if (is_conv) {
    TORCH_CHECK(f.dim() == 4, "conv weight must be [O, I, kh, kw], got ", f.sizes());
    return f.permute({0, 2, 3, 1}).contiguous();
  }
  TORCH_CHECK(f.dim() == 2, "linear weight must be [out, in], got ", f.sizes());
  return dim == SparseDim::kCol ? f.t().contiguous() : f.contiguous();
}

// Undoes GroupBuffer's layout on a mask.
torch::Tensor FromGroupLayout(const torch::Tensor& mask, SparseDim dim, bool is_conv) {
  if (is_conv) return mask.permute({0, 3, 1, 2});
  return dim == SparseDim::kCol ? mask.t() : mask;
}

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
  TORCH_CHECK(nm.m >= 1 && weight.numel() % nm.m == 0, "weight of shape ", weight.sizes(),
              " cannot be split into groups of M=", nm.m);
  TORCH_CHECK(out.sizes() == weight.sizes() && out.scalar_type() == torch::kFloat,
              "mask output must be float32 of the weight's shape");
  torch::NoGradGuard no_grad;
  const torch::Tensor buffer = GroupBuffer(weight, dim, is_conv);
  if (!buffer.is_cpu()) {
    out.copy_(FromGroupLayout(SelectTopNWithTensorOps(buffer, nm.n, nm.m, pruned_value), dim, is_conv));
    return;
  }
  const bool direct = !is_conv && dim == SparseDim::kRow && out.is_contiguous() && out.is_cpu();
  torch::Tensor target = direct ? out : torch::empty_like(buffer);
  SelectTopN(buffer.data_ptr<float>(), target.data_ptr<float>(), buffer.numel(), nm.n, nm.m, pruned_value);
  if (!direct) out.copy_(FromGroupLayout(target, dim, is_conv));
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
