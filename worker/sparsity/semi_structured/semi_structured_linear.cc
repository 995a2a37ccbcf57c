#include "worker/sparsity/semi_structured/semi_structured_linear.h"

#include <torch/torch.h>

#include <utility>

#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/sparsity/semi_structured/two_four_rule.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {

SemiStructuredLinear::SemiStructuredLinear(SemiStructuredKind kind, SemiStructuredMask mask,
                                           SemiStructuredGemmOrWhy backend)
    : kind_(kind), mask_(mask), backend_(std::move(backend)) {}

torch::Tensor SemiStructuredLinear::Forward(const torch::Tensor& input, const torch::Tensor& weight,
                                            const LayerRule* rule, const torch::Tensor& bias) {
  if (preparing_) {
    const int64_t k = weight.size(1);
    if (backend_.gemm != nullptr) {
      backend_.gemm->Prepare(
          {kind_, input.numel() / k, k, weight.size(0), bias.defined(), input.scalar_type()});
    }
    return torch::linear(input, weight, bias);  // Only the shapes matter here.
  }
  if (dense_) {
    path_ = {false, path_.speedup, kDenseAfterReason};
    return torch::linear(input, weight, bias);
  }
  return kind_ == SemiStructuredKind::kWeight ? WeightForward(input, weight, rule, bias)
                                              : ActivationForward(input, weight, rule, bias);
}

bool SemiStructuredLinear::UseKernel(const torch::Tensor& input, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  if (backend_.gemm == nullptr) {
    path_ = {false, 0, backend_.unavailable};
    return false;
  }
  const int64_t k = weight.size(1);
  const GemmDecision d = backend_.gemm->Decide(
      {kind_, input.numel() / k, k, weight.size(0), bias.defined(), input.scalar_type()});
  path_ = {d.sparse, d.speedup, d.reason};
  return d.sparse;
}

torch::Tensor SemiStructuredLinear::WeightForward(const torch::Tensor& input, const torch::Tensor& weight,
                                                  const LayerRule* rule, const torch::Tensor& bias) {
  const std::string why_not = WhyNotTwoFour(rule);
  if (!why_not.empty()) {  // This step's W~ is not 2:4 (dense phase, D > 0, an SDGF stage, ...).
    path_ = {false, path_.speedup, why_not};
    return torch::linear(input, ApplyLayerRule(weight, rule), bias);
  }
  const bool transposable = mask_ == SemiStructuredMask::kTransposable;
  const torch::Tensor w_tilde =
      transposable ? TransposableEffectiveWeight(weight, *rule) : ApplyLayerRule(weight, rule);
  if (!UseKernel(input, weight, bias)) return torch::linear(input, w_tilde, bias);
  return backend_.gemm->WeightSparseLinear(input, w_tilde, bias, transposable);
}

torch::Tensor SemiStructuredLinear::ActivationForward(const torch::Tensor& input, const torch::Tensor& weight,
                                                      const LayerRule* rule, const torch::Tensor& bias) {
  // The mask is a constant of the step: the gradient reaches the kept activations only.
  const torch::Tensor input_24 = input * ActivationTwoFourMask(input);
  const torch::Tensor w_tilde = ApplyLayerRule(weight, rule);
  if (!UseKernel(input, weight, bias)) return torch::linear(input_24, w_tilde, bias);
  return backend_.gemm->ActivationSparseLinear(input_24, w_tilde, bias);
}

torch::Tensor TransposableEffectiveWeight(const torch::Tensor& weight, const LayerRule& rule) {
  const torch::Tensor mask = TransposableTwoFourMask(weight).to(weight.scalar_type());
  if (rule.recipe == Recipe::kSrste)
    return SrsteSparseWeight(weight, mask, rule.srste_lambda,
                             rule.srste_term_scale ? *rule.srste_term_scale : torch::Tensor());
  return DecayedSparseWeight(weight, mask);  // D = 0 (WhyNotTwoFour): the multiplier is the mask.
}

torch::Tensor ActivationTwoFourMask(const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  // bf16 -> fp32 is exact, so the magnitudes compare as in the input's own dtype.
  const torch::Tensor rows = input.detach().to(torch::kFloat32).reshape({-1, input.size(-1)});
  torch::Tensor mask = torch::empty(rows.sizes(), rows.options());
  FillNMMask(rows, NM{2, 4}, SparseDim::kRow, /*is_conv=*/false, /*pruned_value=*/0.f, mask);
  return mask.view(input.sizes()).to(input.scalar_type());
}

}  // namespace nmsparse
