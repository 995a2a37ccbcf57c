// What one sparse layer does at the current optimizer step (set by SparsityEngine::BeginStep, read by the
// layer's forward). Plain C++ so that headers including it stay cheap.
#ifndef NMSPARSE_WORKER_SPARSITY_LAYER_RULE_H_
#define NMSPARSE_WORKER_SPARSITY_LAYER_RULE_H_

#include <memory>
#include <vector>

#include "schemas/sparsity_config.h"

namespace at {
class Tensor;
}  // namespace at

namespace nmsparse {

// How the effective weight W~ and its gradient are formed (spec §2).
enum class Recipe {
  kDense,  // W~ = W, ordinary autograd.
  kDecay,  // W~ = W * (mask + D * (1 - mask)), gradient straight through (STE, MDGF, fine-tune with D = 0).
  kSrste,  // W~ = W * mask, gradient g + lambda * (1 - mask) * W.
};

// One block of output rows. A fused qkv weight [3*dim, dim] has three blocks (Q, K, V), each masked on its
// own [dim, dim] slice with its own N:M; an ordinary layer has one block covering the whole weight.
struct BlockRule {
  bool sparse = true;  // False: this block stays dense (mask of ones), e.g. V when only Q and K are sparse.
  NM nm;
};

struct LayerRule {
  Recipe recipe = Recipe::kDense;
  float decay = 0.f;           // D(j), computed in double and rounded once (kDecay only).
  double srste_lambda = 2e-4;  // kSrste only.
  // kSrste under fp16 loss scaling with sparsity.srste_decay_under_loss_scale EXACT: the loss scale (a [1]
  // device tensor the scaler updates in place), which the term is multiplied by so that unscaling leaves it
  // lambda * (1 - mask) * W. Null: the term joins the gradient as it is (no scaling, or the reference's way).
  std::shared_ptr<const at::Tensor> srste_term_scale;
  bool unstructured = false;  // Keep the int((1 - prune_rate) * numel) largest |w| instead of N:M.
  double prune_rate = 0.5;
  SparseDim sparse_dim = SparseDim::kRow;  // Linear only; convolutions always group along input channels.
  bool is_conv = false;
  std::vector<BlockRule> blocks{BlockRule{}};

  bool AnySparseBlock() const {
    for (const BlockRule& b : blocks) {
      if (b.sparse) return true;
    }
    return false;
  }
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_LAYER_RULE_H_
