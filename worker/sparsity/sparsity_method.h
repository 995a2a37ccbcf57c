// One interface for the ways a run sparsifies its model (docs/sparsity-method.md): the N:M recipes of the
// engine (§1-§6: dense, STE, SR-STE, MDGF, SDGF, unstructured) and dynamic unstructured sparsity (§7). The
// trainer knows only this interface and calls, at every optimizer step (`step` = its 0-based index):
//
//   BeginStep(epoch, step); forward and backward; [gradient all-reduce]; AfterBackward(step);
//   [clipping]; BeforeOptimizerUpdate(step); optimizer.step(); AfterOptimizerStep(step)
//
// and Report at its log points, StateDict / LoadStateDict with the checkpoint, Describe for --validate-only.
#ifndef NMSPARSE_WORKER_SPARSITY_SPARSITY_METHOD_H_
#define NMSPARSE_WORKER_SPARSITY_SPARSITY_METHOD_H_

#include <torch/arg.h>
#include <torch/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schemas/gemm_density.h"
#include "schemas/sparsity_config.h"

namespace torch {
namespace nn {
class Module;
}  // namespace nn
namespace optim {
class Optimizer;
}  // namespace optim
}  // namespace torch

namespace nmsparse {

struct StepSwitch;  // step_method.h

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// What a method says about itself at a step, for the metric lines (docs/nmtrain.md): numbers, and the few
// labels (phase, N:M stage) that are words.
struct SparsityReport {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, double>> numbers;
};

class SparsityMethod {
 public:
  virtual ~SparsityMethod() = default;

  // Before the forward pass of optimizer step `global_step` in `epoch`. Allocates nothing.
  virtual void BeginStep(int epoch, int64_t global_step) = 0;
  // After the gradients are averaged over the ranks, before clipping and the optimizer step.
  virtual void AfterBackward(int64_t global_step) = 0;
  // After clipping, just before the optimizer's update: where a term that must not be clipped joins the
  // gradient (Hu et al.'s masked decay, MaskedDecaySite::kInOptimizer / kAfterClip). Nothing by default.
  virtual void BeforeOptimizerUpdate(int64_t /*global_step*/) {}
  virtual void AfterOptimizerStep(int64_t global_step) = 0;

  // The method's state at `global_step`; `per_layer` adds the measured and target sparsity per location or
  // parameter, which reads every sparse weight (epoch lines; step lines leave it out).
  virtual SparsityReport Report(int64_t global_step, bool per_layer) const = 0;

  // The mask the layer named `layer` (a module name, e.g. "blocks.0.mlp.fc1") multiplies its weight by, when
  // the method holds one of its own rather than the layer rule's (HU24's transposable mask, held between
  // refreshes); undefined otherwise. The diagnostics read it (sparsity_diagnostics.h).
  virtual torch::Tensor HeldMask(const std::string& /*layer*/) const { return {}; }

  // What the forward and input-gradient GEMMs of the step begun last multiply, for the FLOP count (§10).
  // Dense unless a method says otherwise (dynamic sparsity is counted dense).
  virtual GemmDensity ForwardDensity() const { return {}; }
  // Dynamic sparsity: each sparsified parameter's GEMM densities, averaged over the steps begun since the
  // last call (the trainer's FLOP window), then reset; empty for the others, counted by ForwardDensity().
  virtual std::vector<ParameterDensity> TakeParameterDensities() { return {}; }
  // The same for each optimizer step in [first_step, end_step), all begun, for the FLOP count at a sync point
  // (a method whose phase lives on the device may read it here, once). By default ForwardDensity() for each:
  // the rule of the step begun last, exact where the rule changes only at epoch ends, which end windows.
  virtual std::vector<GemmDensity> ForwardDensities(int64_t first_step, int64_t end_step) const {
    return std::vector<GemmDensity>(static_cast<size_t>(std::max<int64_t>(end_step - first_step, 0)),
                                    ForwardDensity());
  }

  // Tensors a resumed run needs besides the model and optimizer (dynamic masks); LoadStateDict restores them.
  virtual NamedTensors StateDict() const = 0;
  virtual absl::Status LoadStateDict(const NamedTensors& state) = 0;

  // --validate-only: what every sparse layer gets, over the whole schedule.
  virtual std::string Describe(int total_epochs, int64_t steps_per_epoch) = 0;

  // The deployable model (docs/interop.md), what `nmtrain --export` writes: multiplies every sparse weight in
  // place by its hard mask at the target N:M (no decayed leak; SDGF's last stage) and returns true; the rules
  // stay so until the next BeginStep. False, touching nothing, for a method without such a model (dense runs,
  // dynamic sparsity, whose export is not supported yet).
  virtual bool MaskWeightsAtTarget() { return false; }
};

// What CreateSparsityMethod needs besides the config and the model: the run's schedule (the N:M engine's
// phases are fractions of it), the optimizer (dynamic sparsity clears the state of pruned weights; null for
// validate-only) and the run's seed (dynamic sparsity's random regrowth).
struct SparsityMethodOptions {
  using OptimizerPointer = torch::optim::Optimizer*;  // TORCH_ARG's `const T&` must not reach the pointee.

  SparsityMethodOptions(int total_epochs, int64_t steps_per_epoch)
      : total_epochs_(total_epochs), steps_per_epoch_(steps_per_epoch) {}
  TORCH_ARG(int, total_epochs);
  TORCH_ARG(int64_t, steps_per_epoch);
  // The epochs the N:M phases and SDGF stages divide (schemas/trained_epochs.h SparsityEpochs; 0: all).
  TORCH_ARG(int, span_epochs) = 0;
  TORCH_ARG(OptimizerPointer, optimizer) = nullptr;
  TORCH_ARG(uint64_t, seed) = 0;
  // SR-STE under fp16 loss scaling, exact mode: the loss scale its term is multiplied by (LayerRule::
  // srste_term_scale); undefined: none.
  TORCH_ARG(torch::Tensor, srste_term_scale);
  // STEP (step_method.h): the switch shared with the optimizer's update; null for other recipes.
  TORCH_ARG(std::shared_ptr<StepSwitch>, step_switch);
};

// The method `config` asks for: dynamic sparsity when it has `dynamic` groups, the N:M engine otherwise (a
// dense run is the engine with no sparse layer). InvalidArgument naming the key when the config does not fit
// the model. The model and optimizer must outlive the method.
absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateSparsityMethod(const SparsityConfig& config,
                                                                     torch::nn::Module& model,
                                                                     const SparsityMethodOptions& options);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SPARSITY_METHOD_H_
