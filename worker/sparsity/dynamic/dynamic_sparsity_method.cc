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

  // Masks change after steps only; a step's densities join the FLOP window's.
  void BeginStep(int /*epoch*/, int64_t global_step) override {
    std::vector<ParameterDensity> step = controller_->StepDensities(global_step);
    if (window_.size() != step.size()) window_.assign(step.size(), ParameterDensity{"", 0.0, 0.0});
    for (size_t i = 0; i < step.size(); ++i) {
      window_[i].name = step[i].name;
      window_[i].forward += step[i].forward;
      window_[i].weight_gradient += step[i].weight_gradient;
    }
    ++window_steps_;
  }

  std::vector<ParameterDensity> TakeParameterDensities() override {
    std::vector<ParameterDensity> out;
    for (const ParameterDensity& d : window_) {
      out.push_back({d.name, d.forward / window_steps_, d.weight_gradient / window_steps_});
    }
    window_.clear();
    window_steps_ = 0;
    return out;
  }
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

  // The diagnostics' flip rate and pruned-gradient norm (§11) read a layer's mask by module name.
  torch::Tensor HeldMask(const std::string& layer) const override {
    return controller_->MaskOf(layer + ".weight");
  }

  NamedTensors StateDict() const override { return controller_->StateDict(); }
  absl::Status LoadStateDict(const NamedTensors& state) override { return controller_->LoadStateDict(state); }

  std::string Describe(int /*total_epochs*/, int64_t /*steps_per_epoch*/) override {
    return controller_->FormatPlan();
  }

 private:
  std::unique_ptr<DynamicSparsityController> controller_;
  std::vector<ParameterDensity> window_;  // Sums over the window's steps (forward, weight_gradient).
  int64_t window_steps_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateDynamicSparsityMethod(
    const std::vector<DynamicSparsityGroup>& groups, torch::nn::Module& model,
    torch::optim::Optimizer* optimizer, uint64_t seed, int64_t total_steps) {
  DynamicSparsityController::NamedParameters params;
  for (const auto& item : model.named_parameters()) params.emplace_back(item.key(), item.value());
  auto controller = DynamicSparsityController::Create(groups, params, optimizer, seed, total_steps);
  if (!controller.ok()) return controller.status();
  return std::make_unique<DynamicSparsityMethod>(std::move(*controller));
}

}  // namespace nmsparse
