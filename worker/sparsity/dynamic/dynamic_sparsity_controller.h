// Dynamic unstructured sparsity during training (docs/sparsity-method.md §7): one mask per selected
// parameter, created at update.start (dense before), changed on update steps by the group's algorithm
// (static, gmp, set, rigl), applied to weights after every optimizer step, to gradients after every backward,
// and to the optimizer state (AdamW/Adam exp_avg, exp_avg_sq, max_exp_avg_sq; SGD momentum) when it changes.
//
// In a training step (step = optimizer step index from 0):
//   loss.backward(); [all-reduce gradients]; controller->AfterBackward(step);
//   [clip]; optimizer.step(); controller->AfterOptimizerStep(step);
// AfterBackward keeps RigL's dense gradient on its update steps, then zeroes pruned weights' gradients.
// AfterOptimizerStep re-applies W *= mask, creates the masks when step + 1 == update.start (Create does it
// for start 0), and updates them after update steps (UpdateSchedule::IsUpdateStep). Newly active weights
// start at zero (a weight dropped and regrown in the same update keeps its value, as in RigL). Random choices
// are seeded by (seed, parameter, step), so a resumed run repeats them; the checkpoint holds the masks.
//
// SRIGL (§7.1, const_fan_in.h) keeps its authors' counters instead: steps count from 1 (u = step + 1), an
// update follows optimizer step u when u % freq == 0 and u < T_end, the growth score is the dense gradient
// averaged over the grad_accumulation_n steps up to the update (kept in the checkpoint while it
// accumulates, so that a resume inside that window is exact), and Adam's moments are not cleared (the
// authors reset SGD momentum only).
#ifndef NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_CONTROLLER_H_
#define NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_CONTROLLER_H_

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/gemm_density.h"
#include "schemas/sparsity_config.h"
#include "worker/sparsity/dynamic/dynamic_mask.h"

namespace nmsparse {

struct DynamicLayerReport {
  std::string name;
  DynamicAlgorithm algorithm = DynamicAlgorithm::kStatic;
  double target_sparsity = 0.0;  // The schedule at the step (at update.start for static; 0 before start).
  double actual_sparsity = 0.0;  // Fraction of the mask that is 0 (0 while dense).
};

// One parameter of the model in a validate-only listing.
struct DynamicPlanEntry {
  std::string name;
  std::vector<int64_t> shape;
  int group = -1;  // Index into the groups; -1: stays dense.
  DynamicAlgorithm algorithm = DynamicAlgorithm::kStatic;
  std::string sparsity;       // DescribeSchedule.
  std::string drop_fraction;  // SET / RigL only.
  InitMethod init_method = InitMethod::kRandom;
  UpdateSchedule update;
  dynamic::Blocks blocks;
};

class DynamicSparsityController {
 public:
  using NamedParameters = std::vector<std::pair<std::string, torch::Tensor>>;

  // Selects the parameters of each group (first matching group wins) and, for update.start 0, creates their
  // masks. InvalidArgument naming the key ("sparsity.dynamic[1].param_filter[0]: ...") when a filter matches
  // no parameter or a balance group count does not divide a selected parameter's rows or columns.
  // `optimizer` may be null (set it later with SetOptimizer) and must hold the same parameter tensors.
  static absl::StatusOr<std::unique_ptr<DynamicSparsityController>> Create(
      const std::vector<DynamicSparsityGroup>& groups, const NamedParameters& parameters,
      torch::optim::Optimizer* optimizer = nullptr, uint64_t seed = 0, int64_t total_steps = 0);

  void SetOptimizer(torch::optim::Optimizer* optimizer) { optimizer_ = optimizer; }

  void AfterBackward(int64_t step);
  void AfterOptimizerStep(int64_t step);

  // Per sparsified parameter, in model order.
  std::vector<DynamicLayerReport> Report(int64_t step) const;

  // Masks by parameter name (only those created so far); LoadStateDict restores them (and re-applies them
  // to the weights). InvalidArgument for an unknown name or a wrong shape.
  NamedParameters StateDict() const;
  absl::Status LoadStateDict(const NamedParameters& masks);

  // Every parameter of the model with what it gets (dense ones with group -1).
  const std::vector<DynamicPlanEntry>& Plan() const { return plan_; }
  // A table of Plan() for --validate-only.
  std::string FormatPlan() const;

  // What a training step computes per sparsified parameter (docs/sparsity-method.md §10): forward and input
  // gradient at the scheduled density once a mask exists, the weight gradient at it too except on the steps
  // whose dense gradient RigL (its update steps) and SRIGL (its accumulation windows) read. No host read.
  std::vector<ParameterDensity> StepDensities(int64_t step) const;

  // The mask of a parameter (undefined while dense, or for parameters outside every group).
  torch::Tensor MaskOf(const std::string& name) const;

 private:
  struct Layer {
    std::string name;
    torch::Tensor param;
    int group = 0;  // Index into groups_.
    dynamic::Blocks blocks;
    torch::Tensor mask;
    torch::Tensor dense_grad;  // RigL, kept from AfterBackward to AfterOptimizerStep of an update step;
                               // SRIGL, the mean so far over its accumulation window.
    int index = 0;
    int64_t t_end = 0;      // SRIGL: no update from (1-based) step t_end on.
    bool ablation = false;  // SRIGL: dynamic_ablation, and no no_ablation_filter glob matches.
  };

  DynamicSparsityController() = default;
  void Init(Layer& layer);
  void Update(Layer& layer, int64_t step);
  // Applies `mask` to the weight and optimizer state, zeroing weights that were inactive before.
  void SetMask(Layer& layer, torch::Tensor mask);
  void UpdateSrigl(Layer& layer, int64_t step);
  uint64_t SeedFor(const Layer& layer, int64_t step) const;

  std::vector<DynamicSparsityGroup> groups_;
  std::vector<Layer> layers_;
  std::vector<DynamicPlanEntry> plan_;
  torch::optim::Optimizer* optimizer_ = nullptr;
  uint64_t seed_ = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_DYNAMIC_DYNAMIC_SPARSITY_CONTROLLER_H_
