// W~ kept across the forward passes of one evaluation. The weights and the rule cannot change between two
// evaluation batches (no optimizer step runs there), so recomputing W~ per batch would redo the same masks:
// the masks are recomputed only when the recipe needs it (each training step). The cache is keyed by the
// rule (kept alive, so that a new rule at a reused address cannot pass for the old one), the weight's
// storage and its version counter (any in-place update, an optimizer step or a checkpoint load, bumps it).
#ifndef NMSPARSE_WORKER_SPARSITY_EVAL_WEIGHT_CACHE_H_
#define NMSPARSE_WORKER_SPARSITY_EVAL_WEIGHT_CACHE_H_

#include <torch/types.h>

#include <memory>
#include <utility>

namespace nmsparse {

struct LayerRule;

class EvalWeightCache {
 public:
  // W~ of `weight` under `rule`: `compute()` when the module trains or autograd records (training needs W~'s
  // graph; the cache is dropped), else the cached W~ while weight and rule are the ones it was made from.
  template <typename Compute>
  torch::Tensor Get(bool training, const torch::Tensor& weight, const std::shared_ptr<const LayerRule>& rule,
                    Compute&& compute) {
    if (training || torch::GradMode::is_enabled()) {
      Clear();
      return compute();
    }
    if (!Holds(weight, rule)) {
      weight_tilde_ = compute();
      rule_ = rule;
      storage_ = weight.data_ptr();
      version_ = weight._version();
    }
    return weight_tilde_;
  }

  void Clear() {
    weight_tilde_ = torch::Tensor();
    rule_.reset();
    storage_ = nullptr;
    version_ = -1;
  }

 private:
  bool Holds(const torch::Tensor& weight, const std::shared_ptr<const LayerRule>& rule) const {
    return weight_tilde_.defined() && rule_ == rule && storage_ == weight.data_ptr() &&
           version_ == static_cast<int64_t>(weight._version());
  }

  torch::Tensor weight_tilde_;
  std::shared_ptr<const LayerRule> rule_;
  const void* storage_ = nullptr;
  int64_t version_ = -1;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_EVAL_WEIGHT_CACHE_H_
