#include "worker/sparsity/two_four.h"

#include <torch/torch.h>

#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"

namespace nmsparse {
namespace {

// The index of each group's draw from the cumulative weights `cum` [.., 4] at `target` [.., 1]: the first
// entry whose cumulative weight exceeds the target (a zero weight is never chosen, since its cumulative
// weight equals its predecessor's), clamped to the last entry against rounding at the top.
torch::Tensor DrawIndex(const torch::Tensor& cum, const torch::Tensor& target) {
  return cum.le(target).sum(-1, /*keepdim=*/true).clamp_max(3);
}

}  // namespace

torch::Tensor HardTwoFourMask(const torch::Tensor& x) { return HardNMMask(x, NM{2, 4}); }

torch::Tensor HardNMMask(const torch::Tensor& x, NM nm) {
  TORCH_CHECK(x.numel() % nm.m == 0, "HardNMMask: ", x.numel(), " elements are not groups of ", nm.m);
  // Reversing the flattened tensor maps each group of m onto a group, with its order reversed: NMMask's
  // "lower index wins" on the reversed groups is "higher index wins" on the originals.
  const torch::Tensor reversed = x.detach().reshape({-1}).flip(0).view({-1, nm.m});
  return NMMask(reversed, nm, SparseDim::kRow, /*is_conv=*/false).reshape({-1}).flip(0).view(x.sizes());
}

torch::Tensor AuthorsTransposableMask(const torch::Tensor& weight) {
  return TransposableTwoFourMask(weight, TransposableOrder::kAuthors);
}

torch::Tensor SoftThresholdTwoFour(const torch::Tensor& x) {
  TORCH_CHECK(x.numel() % 4 == 0, "SoftThresholdTwoFour: ", x.numel(), " elements are not groups of 4");
  torch::NoGradGuard no_grad;
  const torch::Tensor groups = x.detach().reshape({-1, 4});
  const torch::Tensor magnitude = groups.abs();
  const torch::Tensor t = std::get<0>(magnitude.sort(-1)).narrow(-1, 1, 1);  // Second smallest |x|.
  return (groups.sign() * (magnitude - t).clamp_min(0)).view(x.sizes());
}

double SoftThresholdScale(const torch::Tensor& weight) {
  const torch::Tensor w = weight.detach().to(torch::kDouble);
  const torch::Tensor s = SoftThresholdTwoFour(weight).to(torch::kDouble);
  return static_cast<float>((w * s).sum().item<double>() / (s * s).sum().item<double>());
}

torch::Tensor MvueInclusionProbability(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.size(1) % 4 == 0, "MvueInclusionProbability: ", x.sizes(),
              " is not [rows, 4g]");
  const torch::Tensor a = x.detach().to(torch::kDouble).abs().add_(kMvueEps).view({x.size(0), -1, 4});
  const torch::Tensor s = a.sum(-1, /*keepdim=*/true);
  const torch::Tensor t = a / s;
  const torch::Tensor t_over_rest = t / (s - a);  // P(second = k | first = m) / a_k summed over m below.
  return (t + a * (t_over_rest.sum(-1, /*keepdim=*/true) - t_over_rest)).view(x.sizes());
}

torch::Tensor MvueTwoFour(const torch::Tensor& x, torch::Generator generator) {
  TORCH_CHECK(x.dim() == 2, "MvueTwoFour: ", x.sizes(), " is not [rows, k]");
  torch::NoGradGuard no_grad;
  const int64_t rows = x.size(0), grouped = x.size(1) / 4 * 4;
  torch::Tensor out = x.detach().clone();  // The tail (k % 4 entries per row) stays as it is.
  if (grouped == 0) return out;
  const torch::Tensor body = x.detach().narrow(1, 0, grouped).to(torch::kDouble);
  const torch::Tensor a = body.abs().add_(kMvueEps).view({rows, -1, 4});
  const auto draws_shape = std::vector<int64_t>{rows, grouped / 4, 1};
  // Drawn where the generator lives (a CPU generator for a GPU tensor costs one copy; a CUDA kernel would
  // draw in place), so that a run's samples depend on its seed and step only.
  const auto options = torch::TensorOptions().dtype(torch::kDouble).device(generator.device());
  const torch::Tensor u_first = torch::rand(draws_shape, generator, options).to(x.device());
  const torch::Tensor u_second = torch::rand(draws_shape, generator, options).to(x.device());
  // First index with probability a_i / S, then j != i with probability a_j / (S - a_i).
  const torch::Tensor first = DrawIndex(a.cumsum(-1), u_first * a.sum(-1, true));
  const torch::Tensor rest = a.scatter(-1, first, 0.0);
  torch::Tensor second = DrawIndex(rest.cumsum(-1), u_second * rest.sum(-1, true));
  // Rounding at the very top can clamp onto the first draw: take the last other entry then.
  second =
      torch::where(second.eq(first), torch::where(first.eq(3), torch::full_like(first, 2), second), second);
  const torch::Tensor kept = torch::zeros_like(a).scatter_(-1, first, 1.0).scatter_(-1, second, 1.0);
  const torch::Tensor p = MvueInclusionProbability(body);
  const torch::Tensor estimate = (body / p * kept.view({rows, grouped}));
  out.narrow(1, 0, grouped).copy_(estimate);
  return out;
}

torch::Tensor MvueWeightGradient(const torch::Tensor& grad_output, const torch::Tensor& input,
                                 torch::Generator generator) {
  TORCH_CHECK(grad_output.dim() == 2 && input.dim() == 2 && grad_output.size(0) == input.size(0),
              "MvueWeightGradient: dY ", grad_output.sizes(), " and X ", input.sizes(),
              " are not [tokens, *]");
  return MvueTwoFour(grad_output.t(), std::move(generator)).matmul(input);
}

double MaskedDecayScale(MaskedDecaySite site, int64_t batch) {
  return site == MaskedDecaySite::kAutograd ? static_cast<double>(batch) : 1.0;
}

void AddMaskedDecay(torch::Tensor& grad, const torch::Tensor& weight, const torch::Tensor& mask,
                    double alpha) {
  torch::NoGradGuard no_grad;
  grad.add_(weight.detach() * mask.eq(0).to(weight.scalar_type()), alpha);
}

}  // namespace nmsparse
