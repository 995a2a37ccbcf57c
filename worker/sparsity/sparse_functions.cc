#include "worker/sparsity/sparse_functions.h"

#include <torch/autograd.h>

#include "worker/sparsity/nm_mask.h"

namespace nmsparse {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Row block b of `blocks` equal blocks of `t` (a view).
torch::Tensor RowBlock(const torch::Tensor& t, int64_t b, int64_t blocks) {
  const int64_t rows = t.size(0) / blocks;
  return t.narrow(0, b * rows, rows);
}

// Fills `out` (weight's shape) row block by row block (Q, K, V of a fused qkv; one block otherwise):
// sparse(weight block, its N:M, out block) or dense(weight block, out block).
template <typename Sparse, typename Dense>
void FillRowBlocks(const torch::Tensor& weight, const LayerRule& rule, const torch::Tensor& out,
                   Sparse sparse, Dense dense) {
  const int64_t blocks = static_cast<int64_t>(rule.blocks.size());
  TORCH_CHECK(blocks >= 1 && weight.size(0) % blocks == 0, "weight of shape ", weight.sizes(),
              " cannot be split into ", blocks, " row blocks");
  for (int64_t b = 0; b < blocks; ++b) {
    const torch::Tensor w = RowBlock(weight, b, blocks);
    if (rule.blocks[b].sparse) {
      sparse(w, rule.blocks[b].nm, RowBlock(out, b, blocks));
    } else {
      dense(w, RowBlock(out, b, blocks));
    }
  }
}

// dL/dW of SR-STE from the saved (W, W~): g + lambda * (W - W~), which is g + lambda * (1 - mask) * W for a
// binary mask (W - W~ is W or 0, element by element), so no mask needs to be kept for the backward pass.
variable_list SrsteBackward(AutogradContext* ctx, const variable_list& grad_outputs, size_t other_inputs) {
  const variable_list saved = ctx->get_saved_variables();
  const double lambda = ctx->saved_data["lambda"].toDouble();
  torch::Tensor term = saved[0] - saved[1];
  // Under loss scaling (exact mode) the incoming gradient is scale * g: the term is scaled with it, so that
  // unscaling divides both.
  if (ctx->saved_data.count("term_scale") > 0) term = term * ctx->saved_data["term_scale"].toTensor();
  variable_list grads(1 + other_inputs);
  grads[0] = torch::add(grad_outputs[0], term, lambda);
  return grads;
}

// STE, MDGF and fine-tune: W~ = W * (mask + D * (1 - mask)); the gradient passes straight through.
class DecayedSparseFunction : public torch::autograd::Function<DecayedSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* /*ctx*/, const torch::Tensor& weight, const LayerRule* rule) {
    return SparseWeightOf(weight, *rule, rule->decay);
  }
  static variable_list backward(AutogradContext* /*ctx*/, variable_list grad_outputs) {
    return {grad_outputs[0], torch::Tensor()};
  }
};

// The same with a given multiplier (a mask the engine did not make, e.g. a transposable 2:4 one).
class MultiplierFunction : public torch::autograd::Function<MultiplierFunction> {
 public:
  static torch::Tensor forward(AutogradContext* /*ctx*/, const torch::Tensor& weight,
                               const torch::Tensor& multiplier) {
    return weight * multiplier;
  }
  static variable_list backward(AutogradContext* /*ctx*/, variable_list grad_outputs) {
    return {grad_outputs[0], torch::Tensor()};
  }
};

// SR-STE: W~ = W * mask with the rule's mask, formed in one pass (SparseWeightOf).
class SrsteFunction : public torch::autograd::Function<SrsteFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weight, const LayerRule* rule) {
    torch::Tensor sparse = SparseWeightOf(weight, *rule, 0.f);
    ctx->save_for_backward({weight, sparse});
    ctx->saved_data["lambda"] = rule->srste_lambda;
    if (rule->srste_term_scale) ctx->saved_data["term_scale"] = *rule->srste_term_scale;
    return sparse;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return SrsteBackward(ctx, grad_outputs, 1);
  }
};

// SR-STE with a given binary mask.
class SrsteMaskFunction : public torch::autograd::Function<SrsteMaskFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& weight, const torch::Tensor& mask,
                               double lambda, const torch::Tensor* term_scale) {
    torch::Tensor sparse = weight * mask;
    ctx->save_for_backward({weight, sparse});
    ctx->saved_data["lambda"] = lambda;
    if (term_scale != nullptr) ctx->saved_data["term_scale"] = *term_scale;
    return sparse;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return SrsteBackward(ctx, grad_outputs, 3);
  }
};

}  // namespace

torch::Tensor LayerMask(const torch::Tensor& weight, const LayerRule& rule, float pruned_value) {
  torch::NoGradGuard no_grad;
  if (rule.unstructured) return UnstructuredMask(weight, rule.prune_rate, pruned_value);
  torch::Tensor mask = torch::empty(weight.sizes(), weight.options().dtype(torch::kFloat));
  FillRowBlocks(
      weight, rule, mask,
      [&](const torch::Tensor& w, NM nm, torch::Tensor out) {
        FillNMMask(w, nm, rule.sparse_dim, rule.is_conv, pruned_value, out);
      },
      [](const torch::Tensor& /*w*/, torch::Tensor out) { out.fill_(1.f); });
  return mask.scalar_type() == weight.scalar_type() ? mask : mask.to(weight.scalar_type());
}

torch::Tensor SparseWeightOf(const torch::Tensor& weight, const LayerRule& rule, float pruned_value) {
  torch::NoGradGuard no_grad;
  const torch::Tensor w = weight.detach();
  if (rule.unstructured) return w * UnstructuredMask(w, rule.prune_rate, pruned_value);
  torch::Tensor sparse = torch::empty_like(w, torch::MemoryFormat::Contiguous);
  FillRowBlocks(
      w, rule, sparse,
      [&](const torch::Tensor& block, NM nm, torch::Tensor out) {
        FillNMSparseWeight(block, nm, rule.sparse_dim, rule.is_conv, pruned_value, out);
      },
      [](const torch::Tensor& block, torch::Tensor out) { out.copy_(block); });
  return sparse;
}

torch::Tensor DecayedSparseWeight(const torch::Tensor& weight, const torch::Tensor& multiplier) {
  return MultiplierFunction::apply(weight, multiplier);
}

torch::Tensor SrsteSparseWeight(const torch::Tensor& weight, const torch::Tensor& mask, double lambda,
                                const torch::Tensor& term_scale) {
  // Passed by pointer: an autograd function's tensor inputs must be defined.
  return SrsteMaskFunction::apply(weight, mask, lambda, term_scale.defined() ? &term_scale : nullptr);
}

torch::Tensor ApplyLayerRule(const torch::Tensor& weight, const LayerRule* rule) {
  if (rule == nullptr || rule->recipe == Recipe::kDense || !rule->AnySparseBlock()) return weight;
  if (rule->recipe == Recipe::kSrste) return SrsteFunction::apply(weight, rule);
  return DecayedSparseFunction::apply(weight, rule);
}

}  // namespace nmsparse
