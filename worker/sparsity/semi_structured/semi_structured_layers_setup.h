// Installs the spec's semi-structured linears on a model: picks the SparseLinears by module name
// (SelectSemiStructuredLayers), gives each a SemiStructuredLinear on the device's 2:4 GEMMs (or the masked
// dense path, saying why), switches them dense per the sparse-then-dense recipe at every step, and reports
// per layer which path ran, for the metric lines.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LAYERS_SETUP_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LAYERS_SETUP_H_

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/semi_structured_config.h"
#include "worker/sparsity/phase_schedule.h"
#include "worker/sparsity/semi_structured/dense_switch.h"
#include "worker/sparsity/semi_structured/semi_structured_linear.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace nmsparse {

class SparseLinearImpl;

struct SemiStructuredLayerReport {
  std::string name;
  SemiStructuredKind kind = SemiStructuredKind::kWeight;
  SemiStructuredPath path;  // Of the layer's last forward pass (reason "not run yet" before the first).
};

class SemiStructuredLayers {
 public:
  // nullptr when the section chooses no layer. InvalidArgument (naming semi_structured.* and the layer) when
  // a pattern matches no SparseLinear or dense_after.phase is not a phase of the run. Holds the chosen
  // layers; its destructor gives them back their ordinary forward.
  static absl::StatusOr<std::unique_ptr<SemiStructuredLayers>> Install(
      const SemiStructuredConfig& config, const SparsityConfig& sparsity, int total_epochs,
      int64_t steps_per_epoch, torch::nn::Module& model, const torch::Device& device, int span_epochs = 0);
  ~SemiStructuredLayers();

  // Set-up, before the run's first step `first_global_step`: `forward_passes` runs the model's forward pass
  // at every batch shape the run will see (training micro-batch, evaluation batch, its last partial batch,
  // under the run's autocast); meanwhile each layer makes the plans of its GEMM and decides (timing under
  // auto). After this no step sets anything up: a shape not seen here runs masked dense and says so. Does
  // nothing when the layers are dense from `first_global_step` on (the switch never goes back) or have no
  // kernels.
  void Prepare(int64_t first_global_step, const std::function<void()>& forward_passes);

  // Before the forward pass of optimizer step `global_step`: the dense switch. Allocates nothing.
  void BeginStep(int64_t global_step);

  std::vector<SemiStructuredLayerReport> Report() const;

 private:
  struct Layer {
    std::string name;
    std::shared_ptr<SparseLinearImpl> module;
    std::shared_ptr<SemiStructuredLinear> linear;
  };
  SemiStructuredLayers(std::vector<Layer> layers, DenseSwitch dense_switch, SemiStructuredGemmOrWhy backend,
                       SemiStructuredMask mask)
      : layers_(std::move(layers)), dense_switch_(dense_switch), backend_(std::move(backend)), mask_(mask) {}

  std::vector<Layer> layers_;
  DenseSwitch dense_switch_;
  SemiStructuredGemmOrWhy backend_;
  SemiStructuredMask mask_;
};

// "weight_2:4 kernel 1.28x (2:4 1.28x >= 1.05x needed)" or "weight_2:4 masked dense (device cpu)": the
// value of a layer's semi_structured/<name> field in the metric lines.
std::string FormatSemiStructuredReport(const SemiStructuredLayerReport& report);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_SEMI_STRUCTURED_LAYERS_SETUP_H_
