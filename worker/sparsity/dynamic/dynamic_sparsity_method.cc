#include "worker/sparsity/dynamic/dynamic_sparsity_method.h"

#include <torch/torch.h>

#include <string>
#include <utility>

#include "worker/sparsity/dynamic/dynamic_sparsity_controller.h"

namespace nmsparse {
namespace {

class DynamicSparsityMethod : public SparsityMethod {
 public:
  explicit DynamicSparsityMethod(std::unique_ptr<DynamicSparsityController> controller)
      : controller_(std::move(controller)) {}

  void BeginStep(int /*epoch*/, int64_t /*global_step*/) override {}  // Masks change after steps only.
  void AfterBackward(int64_t global_step) override { controller_->AfterBackward(global_step); }
  void AfterOptimizerStep(int64_t global_step) override { controller_->AfterOptimizerStep(global_step); }

  // Per parameter in every line: the schedule is what a dynamic run is studied by.
  SparsityReport Report(int64_t global_step, bool /*per_layer*/) const override {
    SparsityReport report;
    for (const DynamicLayerReport& layer : controller_->Report(global_step)) {
      report.numbers.emplace_back("sparsity/" + layer.name, layer.actual_sparsity);
      report.numbers.emplace_back("target_sparsity/" + layer.name, layer.target_sparsity);
    }
    return report;
  }

  NamedTensors StateDict() const override { return controller_->StateDict(); }
  absl::Status LoadStateDict(const NamedTensors& state) override { return controller_->LoadStateDict(state); }

  std::string Describe(int /*total_epochs*/, int64_t /*steps_per_epoch*/) override {
    return controller_->FormatPlan();
  }

 private:
  std::unique_ptr<DynamicSparsityController> controller_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateDynamicSparsityMethod(
    const std::vector<DynamicSparsityGroup>& groups, torch::nn::Module& model,
    torch::optim::Optimizer* optimizer, uint64_t seed) {
  DynamicSparsityController::NamedParameters params;
  for (const auto& item : model.named_parameters()) params.emplace_back(item.key(), item.value());
  auto controller = DynamicSparsityController::Create(groups, params, optimizer, seed);
  if (!controller.ok()) return controller.status();
  return std::make_unique<DynamicSparsityMethod>(std::move(*controller));
}

}  // namespace nmsparse
