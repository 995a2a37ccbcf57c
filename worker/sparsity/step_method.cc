#include "worker/sparsity/step_method.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/mvue_linear.h"
#include "worker/sparsity/nm_sparsity_method.h"
#include "worker/sparsity/semi_structured/linear_accelerator.h"
#include "worker/sparsity/sparse_linear.h"
#include "worker/sparsity/two_four.h"

namespace nmsparse {
namespace {

constexpr char kPrefix[] = "step/";
constexpr char kDenseStepsKey[] = "step/dense_steps";  // StepMethod's, beside the switch's state.

// One layer's STEP forward (the authors' STEPLinear): training uses W before the switch and its hard 2:4
// after, chosen on the device from the switch's flag; evaluation always the 2:4 weights. The gradient goes
// straight through to W either way.
class StepLinear : public LinearAccelerator {
 public:
  explicit StepLinear(std::shared_ptr<StepSwitch> step_switch) : switch_(std::move(step_switch)) {}

  torch::Tensor Forward(const torch::Tensor& input, const torch::Tensor& weight, const LayerRule* rule,
                        const torch::Tensor& bias) override {
    if (rule == nullptr || rule->recipe == Recipe::kDense || !rule->AnySparseBlock()) {
      return torch::linear(input, weight, bias);
    }
    const torch::Tensor sparse = weight * HardTwoFourMask(weight.detach()).to(weight.scalar_type());
    if (!torch::GradMode::is_enabled() || !weight.requires_grad()) return torch::linear(input, sparse, bias);
    // Before the update's first step (the switch not yet allocated) the run is dense.
    const torch::Tensor chosen =
        switch_->allocated() ? torch::where(switch_->sparse.to(torch::kBool), sparse, weight) : weight;
    return torch::linear(input, StraightThrough(weight, chosen), bias);
  }

 private:
  std::shared_ptr<StepSwitch> switch_;
};

class StepMethod : public SparsityMethod {
 public:
  StepMethod(std::unique_ptr<SparsityMethod> engine_method, std::shared_ptr<StepSwitch> step_switch)
      : engine_method_(std::move(engine_method)), switch_(std::move(step_switch)) {}

  // Every linear the engine gave a rule gets the STEP forward, and its weight joins the switch's.
  void Install(torch::nn::Module& model) {
    for (const auto& item : model.named_modules()) {
      auto linear = std::dynamic_pointer_cast<SparseLinearImpl>(item.value());
      if (linear == nullptr || linear->rule() == nullptr) continue;
      linear->set_accelerator(std::make_shared<StepLinear>(switch_));
      switch_->weights.emplace_back(item.key(), linear->weight);
    }
    const torch::Device device =
        switch_->weights.empty() ? torch::Device(torch::kCPU) : switch_->weights[0].second.device();
    dense_steps_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  }

  // The step's forward is dense until the switch: counted on the device, so no step waits for the flag.
  void BeginStep(int epoch, int64_t global_step) override {
    engine_method_->BeginStep(epoch, global_step);
    if (switch_->allocated())
      dense_steps_.sub_(switch_->sparse).add_(1.0);
    else
      dense_steps_.add_(1.0);  // Before the update's first step: dense (StepLinear).
  }
  void AfterBackward(int64_t step) override { engine_method_->AfterBackward(step); }
  void AfterOptimizerStep(int64_t step) override { engine_method_->AfterOptimizerStep(step); }

  // The engine's report with the phase STEP is in: one read at a log point.
  SparsityReport Report(int64_t step, bool per_layer) const override {
    SparsityReport report = engine_method_->Report(step, per_layer);
    const bool sparse = switch_->allocated() && switch_->sparse.item<double>() > 0.5;
    for (auto& [label, value] : report.labels) {
      if (label == "phase") value = sparse ? "sparse" : "dense";
    }
    return report;
  }
  // After the switch: the engine's hard 2:4.
  GemmDensity ForwardDensity() const override { return engine_method_->ForwardDensity(); }
  // Exact per step: the switch is one-way, so the first dense_steps_ steps were dense and the rest 2:4. One
  // read of the count per call (sync points only).
  std::vector<GemmDensity> ForwardDensities(int64_t first_step, int64_t end_step) const override {
    std::vector<GemmDensity> densities = SparsityMethod::ForwardDensities(first_step, end_step);
    const auto dense_steps = static_cast<int64_t>(std::llround(dense_steps_.item<double>()));
    for (int64_t step = first_step; step < std::min(end_step, dense_steps); ++step)
      densities[static_cast<size_t>(step - first_step)] = GemmDensity{};
    return densities;
  }

  NamedTensors StateDict() const override {
    NamedTensors state = switch_->StateDict();
    state.emplace_back(kDenseStepsKey, dense_steps_);
    return state;
  }
  absl::Status LoadStateDict(const NamedTensors& state) override {
    NamedTensors switch_state;
    for (const auto& [name, tensor] : state) {
      if (name == kDenseStepsKey)
        dense_steps_ = tensor.to(dense_steps_.device(), torch::kDouble).clone();
      else
        switch_state.emplace_back(name, tensor);
    }
    // A checkpoint from before the count was kept restores none: the run's later steps count as 2:4, as
    // they were counted then.
    return switch_->LoadStateDict(switch_state);
  }

  std::string Describe(int total_epochs, int64_t steps_per_epoch) override {
    return absl::StrCat(engine_method_->Describe(total_epochs, steps_per_epoch),
                        "STEP: dense until the switch ", "test holds after more than ", switch_->t_min,
                        " steps, sparse after ", switch_->t_max, " at the latest; ", switch_->weights.size(),
                        " sparse weight(s)\n");
  }

 private:
  std::unique_ptr<SparsityMethod> engine_method_;
  std::shared_ptr<StepSwitch> switch_;
  torch::Tensor dense_steps_;  // [] float64 on the weights' device: the optimizer steps begun dense.
};

}  // namespace

int64_t StepWindow(double beta2) { return static_cast<int64_t>(1.0 / (1.0 - beta2)); }

NamedTensors StepSwitch::StateDict() const {
  NamedTensors state;
  if (!allocated()) return state;
  for (const auto& [name, tensor] : std::vector<std::pair<std::string, torch::Tensor>>{
           {"steps", steps}, {"pushed", pushed}, {"window", window}, {"sparse", sparse}}) {
    state.emplace_back(kPrefix + name, tensor);
  }
  for (size_t i = 0; i < weights.size(); ++i)
    state.emplace_back(absl::StrCat(kPrefix, "frozen_v/", weights[i].first), frozen[i]);
  return state;
}

absl::Status StepSwitch::LoadStateDict(const NamedTensors& state) {
  if (state.empty()) return absl::OkStatus();  // Saved before the first step.
  const auto find = [&](const std::string& name) -> absl::StatusOr<torch::Tensor> {
    const auto it =
        std::find_if(state.begin(), state.end(), [&](const auto& kv) { return kv.first == kPrefix + name; });
    if (it == state.end())
      return absl::InvalidArgumentError(absl::StrCat("the checkpoint has no STEP state ", kPrefix, name));
    return it->second;
  };
  const torch::Device device = weights.empty() ? torch::Device(torch::kCPU) : weights[0].second.device();
  std::vector<torch::Tensor*> scalars = {&steps, &pushed, &window, &sparse};
  const std::vector<std::string> names = {"steps", "pushed", "window", "sparse"};
  for (size_t k = 0; k < names.size(); ++k) {
    auto t = find(names[k]);
    if (!t.ok()) return t.status();
    *scalars[k] = t->to(device).clone();
  }
  frozen.clear();
  for (const auto& [name, weight] : weights) {
    auto t = find("frozen_v/" + name);
    if (!t.ok()) return t.status();
    if (!t->sizes().equals(weight.sizes()))
      return absl::InvalidArgumentError("the checkpoint's STEP state frozen_v/" + name +
                                        " has another shape");
    frozen.push_back(t->to(device).clone());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SparsityMethod>> CreateStepMethod(const SparsityConfig& config,
                                                                 torch::nn::Module& model,
                                                                 const SparsityMethodOptions& options) {
  // Without an optimizer (--validate-only) a switch of its own; with one, the trainer's (the update's).
  if (options.step_switch() == nullptr && options.optimizer() != nullptr)
    return absl::InvalidArgumentError("sparsity.recipe STEP needs optimizer.name adamw (its update)");
  // The engine places the layers as for STE 2:4 (hard mask, straight through); STEP's switch picks the phase.
  auto engine_method = CreateSteTwoFourEngine(config, model, options);
  if (!engine_method.ok()) return engine_method.status();
  std::shared_ptr<StepSwitch> step_switch =
      options.step_switch() != nullptr ? options.step_switch() : std::make_shared<StepSwitch>();
  // The authors' README bounds, (steps // 10, steps // 2) at the defaults; the small epsilon keeps
  // 0.1 * 30 = 3.0000000000000004 and 0.3 * 10 = 2.9999999999999996 at 3.
  const int64_t total = int64_t{options.total_epochs()} * options.steps_per_epoch();
  step_switch->t_min = static_cast<int64_t>(std::floor(config.step_switch_min * total + 1e-9));
  step_switch->t_max = static_cast<int64_t>(std::floor(config.step_switch_max * total + 1e-9));
  step_switch->z_option = config.step_z_option;
  auto method = std::make_unique<StepMethod>(std::move(*engine_method), step_switch);
  method->Install(model);
  return method;
}

}  // namespace nmsparse
