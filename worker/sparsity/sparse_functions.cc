#include "worker/sparsity/sparse_functions.h"

#include <torch/autograd.h>

#include "worker/sparsity/nm_mask.h"

namespace nmsparse {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class DecayedSparseFunction : public torch::autograd::Function<DecayedSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* /*ctx*/, const torch::Tensor& weight,
                               const torch::Tensor& multiplier) {
    return weight * multiplier;
  }
  static variable_list backward(AutogradContext* /*ctx*/, variable_list grad_outputs) {
    return {grad_outputs[0], torch::Tensor()};
  }
};

class SrsteFunction : public torch::autograd::Function<SrsteFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weight, const torch::Tensor& mask,
                               double lambda) {
    ctx->save_for_backward({weight, mask});
    ctx->saved_data["lambda"] = lambda;
    return weight * mask;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const double lambda = ctx->saved_data["lambda"].toDouble();
    // Same association as the reference: grad + (lambda * (1 - mask)) * weight.
    torch::Tensor grad = grad_outputs[0] + (lambda * (1 - saved[1])) * saved[0];
    return {grad, torch::Tensor(), torch::Tensor()};
  }
};

// Row block b of `rule.blocks.size()` equal blocks of `t` (a view).
torch::Tensor RowBlock(const torch::Tensor& t, int64_t b, int64_t blocks) {
  const int64_t rows = t.size(0) / blocks;
  return t.narrow(0, b * rows, rows);
}

}  // namespace

torch::Tensor DecayedSparseWeight(const torch::Tensor& weight, const torch::Tensor& multiplier) {
  return DecayedSparseFunction::apply(weight, multiplier);
}

torch::Tensor SrsteSparseWeight(const torch::Tensor& weight, const torch::Tensor& mask, double lambda) {
  return SrsteFunction::apply(weight, mask, lambda);
}

torch::Tensor LayerMask(const torch::Tensor& weight, const LayerRule& rule, float pruned_value) {
  torch::NoGradGuard no_grad;
  if (rule.unstructured) return UnstructuredMask(weight, rule.prune_rate, pruned_value);
  const int64_t blocks = static_cast<int64_t>(rule.blocks.size());
  TORCH_CHECK(blocks >= 1 && weight.size(0) % blocks == 0, "weight of shape ", weight.sizes(),
              " cannot be split into ", blocks, " row blocks");
  torch::Tensor mask = torch::empty(weight.sizes(), weight.options().dtype(torch::kFloat));
  for (int64_t b = 0; b < blocks; ++b) {
    const BlockRule& block = rule.blocks[b];
    torch::Tensor out = RowBlock(mask, b, blocks);
    if (block.sparse) {
      FillNMMask(RowBlock(weight, b, blocks), block.nm, rule.sparse_dim, rule.is_conv, pruned_value, out);
    } else {
      out.fill_(1.f);
    }
  }
  return mask.scalar_type() == weight.scalar_type() ? mask : mask.to(weight.scalar_type());
}

torch::Tensor ApplyLayerRule(const torch::Tensor& weight, const LayerRule* rule) {
  if (rule == nullptr || rule->recipe == Recipe::kDense || !rule->AnySparseBlock()) return weight;
  if (rule->recipe == Recipe::kSrste) {
    return SrsteSparseWeight(weight, LayerMask(weight, *rule, 0.f), rule->srste_lambda);
  }
  return DecayedSparseWeight(weight, LayerMask(weight, *rule, rule->decay));
}

}  // namespace nmsparse
