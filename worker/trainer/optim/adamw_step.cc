#include "worker/trainer/optim/adamw_step.h"

#include <torch/torch.h>

#include <memory>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/device/host_reads.h"

namespace nmsparse {
namespace {

// The optimizer's state of `param`, made as torch::optim::AdamW::step() makes it on first use.
torch::optim::AdamWParamState& StateOf(torch::optim::AdamW& optimizer, const torch::Tensor& param) {
  auto& states = optimizer.state();
  const auto key = compat::OptimizerStateKey(param);
  auto it = states.find(key);
  if (it == states.end()) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(param, torch::MemoryFormat::Preserve));
    it = states.emplace(key, std::move(state)).first;
  }
  return static_cast<torch::optim::AdamWParamState&>(*it->second);
}

}  // namespace

AdamWStep::AdamWStep(torch::optim::AdamW& optimizer, bool fused)
    : optimizer_(optimizer), fused_(fused && compat::kHaveFusedAdamW) {}

void AdamWStep::operator()(const torch::Tensor& found_inf) {
  if (!fused_) {
    optimizer_.step();
    return;
  }
  torch::NoGradGuard no_grad;
  FusedStep(found_inf);
}

void AdamWStep::SyncHostSteps() {
  std::vector<torch::Tensor> counts;
  for (const auto& group : device_steps_) {
    for (const auto& count : group) {
      if (count.defined()) counts.push_back(count);
    }
  }
  if (counts.empty()) return;
  const std::vector<double> host = ReadToHost(torch::stack(counts));
  size_t k = 0;
  auto& groups = optimizer_.param_groups();
  for (size_t g = 0; g < device_steps_.size(); ++g) {
    for (size_t i = 0; i < device_steps_[g].size(); ++i) {
      if (device_steps_[g][i].defined())
        StateOf(optimizer_, groups[g].params()[i]).step(static_cast<int64_t>(host[k++]));
    }
  }
}

void AdamWStep::FusedStep(const torch::Tensor& found_inf) {
  auto& groups = optimizer_.param_groups();
  device_steps_.resize(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(groups[g].options());
    TORCH_CHECK(!options.amsgrad(), "the fused AdamW step has no amsgrad");
    auto& params = groups[g].params();
    auto& steps = device_steps_[g];
    steps.resize(params.size());
    std::vector<torch::Tensor> p, grads, exp_avgs, exp_avg_sqs, step_counts;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined()) continue;
      torch::optim::AdamWParamState& state = StateOf(optimizer_, params[i]);
      if (!steps[i].defined()) {
        steps[i] = torch::full({}, static_cast<double>(state.step()),
                               torch::TensorOptions().dtype(torch::kFloat).device(params[i].device()));
      }
      state.step(state.step() + 1);  // The host count, as step() keeps it; the kernel adds to steps[i].
      p.push_back(params[i]);
      grads.push_back(params[i].grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      step_counts.push_back(steps[i]);
    }
    if (p.empty()) continue;
    compat::FusedAdamW(p, grads, exp_avgs, exp_avg_sqs, step_counts, options.lr(),
                       std::get<0>(options.betas()), std::get<1>(options.betas()), options.weight_decay(),
                       options.eps(), found_inf);
  }
}

}  // namespace nmsparse
