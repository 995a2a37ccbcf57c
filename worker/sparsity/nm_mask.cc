#include "worker/sparsity/nm_mask.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse {
namespace {

// Up to this group size a group is ranked by pairwise comparison (M^2 compares, no branches worth
// mentioning, vectorisable); larger groups use nth_element (O(M) per group).
constexpr int64_t kMaxPairwiseM = 16;

// True when the element at `a` outranks the one at `b`: larger magnitude, or equal magnitude and lower index.
inline bool Outranks(float mag_a, int64_t a, float mag_b, int64_t b) {
  return mag_a > mag_b || (mag_a == mag_b && a < b);
}

void SelectSmallGroups(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                       float pruned) {
  float mag[kMaxPairwiseM];
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    for (int64_t i = 0; i < m; ++i) mag[i] = std::fabs(in[i]);
    for (int64_t i = 0; i < m; ++i) {
      int64_t rank = 0;
      for (int64_t k = 0; k < m; ++k) rank += Outranks(mag[k], k, mag[i], i);
      out[i] = rank < n ? 1.f : pruned;
    }
  }
}

void SelectLargeGroups(const float* src, float* dst, int64_t begin, int64_t end, int64_t n, int64_t m,
                       float pruned) {
  std::vector<float> mag(m);
  std::vector<int64_t> order(m);
  for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * m;
    float* out = dst + g * m;
    for (int64_t i = 0; i < m; ++i) mag[i] = std::fabs(in[i]);
    std::iota(order.begin(), order.end(), 0);
    std::nth_element(order.begin(), order.begin() + (n - 1), order.end(),
                     [&](int64_t a, int64_t b) { return Outranks(mag[a], a, mag[b], b); });
    std::fill(out, out + m, pruned);
    for (int64_t i = 0; i < n; ++i) out[order[i]] = 1.f;
  }
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
  const int64_t grain = std::max<int64_t>(1, 16384 / m);
  at::parallel_for(0, groups, grain, [&](int64_t begin, int64_t end) {
    if (m <= kMaxPairwiseM) {
      SelectSmallGroups(src, dst, begin, end, n, m, pruned);
    } else {
      SelectLargeGroups(src, dst, begin, end, n, m, pruned);
    }
  });
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
  const bool direct = !is_conv && dim == SparseDim::kRow && out.is_contiguous();
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
  SelectTopN(buffer.data_ptr<float>(), out.data_ptr<float>(), numel, UnstructuredKeepCount(numel, prune_rate),
             numel, pruned_value);
  return out.to(weight.scalar_type());
}

}  // namespace nmsparse
