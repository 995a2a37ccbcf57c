// The sparsity engine: finds the sparse layers of a model by their timm names, validates every N:M it will
// use before training, and at every optimizer step sets each layer's rule (phase, SDGF stage, D(j)) from
// (epoch, global_step) alone, so that a resumed run continues exactly (docs/sparsity-method.md §1-§5).
//
// SR-STE's term lambda * (1 - mask) * W is added inside the autograd backward of the sparse layers, i.e. to
// the gradient that reaches W. Without loss scaling that is the true gradient, before clipping and the
// optimizer step, as §2 requires. Under fp16 loss scaling it is scale * g: Create's `srste_term_scale` (the
// loss scale) then scales the term with it, so that the trainer's unscaling leaves it exact; without it the
// term is divided by the scale, as in the reference (sparsity.srste_decay_under_loss_scale).
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSITY_ENGINE_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSITY_ENGINE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/sparsity_config.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace nmsparse {

// One sparse weight block now: a layer, or one of Q, K, V of a fused qkv layer.
struct SparseLayerReport {
  std::string name;            // Module name, e.g. "blocks.0.attn.qkv".
  std::string location;        // "ff", "q", "k", "v", "o" or "c".
  std::vector<int64_t> shape;  // Of this block ([dim, dim] for a qkv block).
  std::string target;          // N:M in force ("1:8", the SDGF stage), "unstructured 0.9" or "dense".
  double decay = 1.0;          // D applied to pruned weights (0: hard mask; 1: dense).
  double zero_fraction = 0.0;  // Fraction of exact zeros of W~ in this block.
};

// SparseLayerReport aggregated over one location (zero fraction weighted by weight count).
struct LocationReport {
  std::string location;
  std::string target;
  double decay = 1.0;
  int64_t numel = 0;
  double zero_fraction = 0.0;
};

// The state of the recipe at the current step, for metrics.
struct SparsitySummary {
  std::string phase = "dense";   // "dense", "sparse" or "fine_tune".
  std::string nm = "dense";      // N:M in force for FF, O and C (SDGF stage), or "dense".
  std::string nm_qkv = "dense";  // N:M in force for Q, K and V.
  double decay = 1.0;            // D(j) of the decaying recipes (0 for STE, SR-STE, fine-tune).
  int64_t sparse_step = 0;       // j.
  int epoch = 0;
  int64_t global_step = 0;
};

class SparsityEngine {
 public:
  // Walks model.named_modules() and attaches a rule to every SparseLinear / SparseConv2d at a configured
  // location: "*.mlp.fc1", "*.mlp.fc2" -> FF; "*.attn.qkv" -> Q, K, V (three row blocks of out/3);
  // "*.attn.proj" -> O; "*patch_embed.proj" -> C. Everything else stays dense. InvalidArgument when a
  // location matches no layer, a matching layer is not a Sparse* module, or a layer cannot hold one of the
  // N:M (all SDGF stages) it will use (the error names the layer and its shape). The model must outlive the
  // engine. Rules are dense until the first BeginStep. The phases and SDGF stages divide `span_epochs`
  // (0: total_epochs; PhaseSchedule::Create), the run trains `total_epochs`.
  static absl::StatusOr<std::unique_ptr<SparsityEngine>> Create(const SparsityConfig& config,
                                                                int total_epochs, int64_t steps_per_epoch,
                                                                torch::nn::Module& model, int span_epochs = 0,
                                                                const at::Tensor& srste_term_scale = {});
  ~SparsityEngine();

  // Call before the forward pass of every optimizer step: `global_step` is the 0-based index of the step
  // about to be taken (epoch * steps_per_epoch + step in epoch). Allocates nothing.
  void BeginStep(int epoch, int64_t global_step);

  // The deployable model (docs/interop.md): every sparse block at its target N:M (the last SDGF stage) or
  // unstructured rate with a hard mask (D = 0, no decayed leak), whatever the step; multiplies the weights by
  // their masks in place and leaves the rules so, until the next BeginStep.
  void MaskWeightsAtTarget();

  std::vector<SparseLayerReport> Report() const;         // Computes W~ of every layer: O(weights).
  std::vector<LocationReport> ReportByLocation() const;  // Same, aggregated per location.
  SparsitySummary Summary() const;                       // Cheap.
  std::vector<std::string> SparseLayerNames() const;     // Layers with a rule, in module order.

 private:
  struct State;
  explicit SparsityEngine(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSITY_ENGINE_H_
