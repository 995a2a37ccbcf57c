#include "worker/trainer/optim/step_update.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "worker/compat/torch_compat.h"

namespace nmsparse {
namespace {

const torch::optim::AdamWOptions& DefaultsOf(torch::optim::AdamW& optimizer) {
  return static_cast<const torch::optim::AdamWOptions&>(optimizer.defaults());
}

// The group settings of `param` (it is in exactly one group).
const torch::optim::AdamWOptions& OptionsOf(torch::optim::AdamW& optimizer, const torch::Tensor& param) {
  for (auto& group : optimizer.param_groups()) {
    for (const auto& p : group.params()) {
      if (p.is_same(param)) return static_cast<const torch::optim::AdamWOptions&>(group.options());
    }
  }
  throw std::invalid_argument("STEP: a sparse weight is in no optimizer group");
}

// `param`'s AdamW state, or null before its first step.
torch::optim::AdamWParamState* StateOf(torch::optim::AdamW& optimizer, const torch::Tensor& param) {
  auto& states = optimizer.state();
  const auto it = states.find(compat::OptimizerStateKey(param));
  return it == states.end() ? nullptr : static_cast<torch::optim::AdamWParamState*>(it->second.get());
}

// Z_t from the sparse weights' v before and after the step, as a [] float64 (the authors' .item()).
torch::Tensor ChangeOfV(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after,
                        int option) {
  std::vector<torch::Tensor> sums;
  int64_t count = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    const torch::Tensor change = (after[i] - before[i]).abs_();
    sums.push_back((option == 2 ? change.log_() : change).sum().to(torch::kDouble));
    count += change.numel();
  }
  torch::Tensor mean = torch::stack(sums).sum() / static_cast<double>(count);
  // A single dv of 0 makes the geometric mean 0 (log gives -inf), as in the authors' code.
  return option == 2 ? mean.exp() : mean;
}

}  // namespace

StepUpdate::StepUpdate(torch::optim::AdamW& optimizer, bool fused, std::shared_ptr<StepSwitch> step_switch)
    : optimizer_(optimizer), adamw_(optimizer, fused), switch_(std::move(step_switch)) {}

void StepUpdate::Allocate() {
  TORCH_CHECK(!switch_->weights.empty(), "STEP: no sparse weight (the STEP method installs them)");
  const torch::Device device = switch_->weights[0].second.device();
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble).device(device);
  switch_->steps = torch::zeros({}, f64);
  switch_->pushed = torch::zeros({}, f64);
  switch_->window = torch::zeros({StepWindow(std::get<1>(DefaultsOf(optimizer_).betas()))}, f64);
  switch_->sparse = torch::zeros({}, f64);
  switch_->frozen.clear();
  for (const auto& item : switch_->weights) switch_->frozen.push_back(torch::zeros_like(item.second));
}

void StepUpdate::operator()(const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  if (!switch_->allocated()) Allocate();
  StepSwitch& s = *switch_;
  // Before AdamW's step: each sparse weight and its v (v_{t-1}; zeros before the first step).
  std::vector<torch::Tensor> weights_before, v_before;
  for (const auto& item : s.weights) {
    weights_before.push_back(item.second.detach().clone());
    const auto* state = StateOf(optimizer_, item.second);
    v_before.push_back(state != nullptr ? state->exp_avg_sq().clone() : torch::zeros_like(item.second));
  }
  adamw_(found_inf);

  // 1 where the step counts (no inf gradient skipped on the device), in float64 for the counters.
  const torch::Tensor taken =
      found_inf.defined() ? (1.0 - found_inf.to(torch::kDouble).sum()) : torch::ones_like(s.steps);
  const torch::Tensor was_sparse = s.sparse.clone();
  s.steps.add_(taken);
  std::vector<torch::Tensor> v_after;
  for (const auto& item : s.weights) v_after.push_back(StateOf(optimizer_, item.second)->exp_avg_sq());

  // Phase 1: Z_t into the window, then the switch test (the authors' AutoSwitch at the end of step t).
  const torch::Tensor pushing = taken * (1.0 - was_sparse);
  const int64_t window_size = s.window.size(0);
  const torch::Tensor slot = torch::arange(window_size, s.window.options()) == s.pushed.fmod(window_size);
  s.window = torch::where(slot & (pushing > 0.5), ChangeOfV(v_before, v_after, s.z_option), s.window);
  s.pushed.add_(pushing);
  const torch::Tensor mean = s.window.sum() / s.pushed.clamp(1.0, static_cast<double>(window_size));
  const double eps = DefaultsOf(optimizer_).eps();
  torch::Tensor test = mean < eps;
  if (s.clipping)
    test = (s.steps > static_cast<double>(s.t_max)) | (test & (s.steps > static_cast<double>(s.t_min)));
  const torch::Tensor switching = test & (pushing > 0.5);
  for (size_t i = 0; i < s.weights.size(); ++i)
    s.frozen[i] = torch::where(switching, v_after[i], s.frozen[i]);

  // Phase 2 for the steps that began sparse: the frozen-moment update replaces AdamW's.
  const torch::Tensor frozen_step = (was_sparse * taken) > 0.5;
  for (size_t i = 0; i < s.weights.size(); ++i) {
    torch::Tensor weight = s.weights[i].second;
    const auto& options = OptionsOf(optimizer_, weight);
    const double sqrt_eps = std::sqrt(options.eps());
    const torch::Tensor bias_correction1 = 1.0 - torch::pow(std::get<0>(options.betas()), s.steps);
    const torch::Tensor step_size = (options.lr() / bias_correction1).to(weight.scalar_type());
    const torch::Tensor denom = s.frozen[i].sqrt().add_(sqrt_eps * std::sqrt(sqrt_eps));  // eps^0.75.
    const torch::Tensor exp_avg = StateOf(optimizer_, weight)->exp_avg();
    const torch::Tensor updated = weights_before[i]
                                      .mul_(1.0 - options.lr() * options.weight_decay())
                                      .addcdiv_(exp_avg * -step_size, denom);
    weight.detach().copy_(torch::where(frozen_step, updated, weight.detach()));
  }
  s.sparse = torch::max(s.sparse, switching.to(torch::kDouble));
}

}  // namespace nmsparse
