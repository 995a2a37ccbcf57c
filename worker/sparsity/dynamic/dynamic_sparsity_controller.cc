#include "worker/sparsity/dynamic/dynamic_sparsity_controller.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/param_filter.h"
#include "schemas/step_schedule.h"
#include "worker/compat/torch_compat.h"

namespace nmsparse {
namespace {

using dynamic::Blocks;

dynamic::Init ToInit(InitMethod m) {
  switch (m) {
    case InitMethod::kRandom:
      return dynamic::Init::kRandom;
    case InitMethod::kTopk:
      return dynamic::Init::kTopk;
    case InitMethod::kFromZeros:
      return dynamic::Init::kFromZeros;
  }
  return dynamic::Init::kRandom;
}

std::string ShapeText(torch::IntArrayRef shape) { return "[" + absl::StrJoin(shape, ", ") + "]"; }

// Checks that the balance groups divide the parameter's rows and flattened columns.
absl::Status CheckBlocks(const DynamicSparsityGroup& g, int index, const std::string& name,
                         const torch::Tensor& p) {
  const int64_t rows = p.dim() == 0 ? 1 : p.size(0);
  const int64_t cols = p.dim() <= 1 ? 1 : p.numel() / rows;
  const std::string key = absl::StrCat("sparsity.dynamic[", index, "].");
  if (g.balance_out_groups > 1 && rows % g.balance_out_groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key, "balance_out_groups: value ", g.balance_out_groups,
                                                   " does not divide the ", rows, " output rows of ", name,
                                                   " ", ShapeText(p.sizes())));
  }
  if (g.balance_in_groups > 1 && cols % g.balance_in_groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key, "balance_in_groups: value ", g.balance_in_groups,
                                                   " does not divide the ", cols, " input columns of ", name,
                                                   " ", ShapeText(p.sizes())));
  }
  return absl::OkStatus();
}

// Multiplies every tensor of a parameter's optimizer state that has the parameter's shape by `mask`.
void MaskOptimizerState(torch::optim::Optimizer* optimizer, const torch::Tensor& param,
                        const torch::Tensor& mask) {
  if (optimizer == nullptr) return;
  auto& state = optimizer->state();
  auto it = state.find(compat::OptimizerStateKey(param));
  if (it == state.end() || !it->second) return;
  auto zero = [&](const torch::Tensor& t) {
    if (t.defined() && t.sizes() == mask.sizes()) t.mul_(mask);
  };
  if (auto* s = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get())) {
    zero(s->exp_avg());
    zero(s->exp_avg_sq());
    zero(s->max_exp_avg_sq());
  } else if (auto* s = dynamic_cast<torch::optim::AdamParamState*>(it->second.get())) {
    zero(s->exp_avg());
    zero(s->exp_avg_sq());
    zero(s->max_exp_avg_sq());
  } else if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(it->second.get())) {
    zero(s->momentum_buffer());
  }
}

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double MaskSparsity(const torch::Tensor& mask) {
  if (!mask.defined() || mask.numel() == 0) return 0.0;
  return 1.0 - mask.sum().item<double>() / static_cast<double>(mask.numel());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DynamicSparsityController>> DynamicSparsityController::Create(
    const std::vector<DynamicSparsityGroup>& groups, const NamedParameters& parameters,
    torch::optim::Optimizer* optimizer, uint64_t seed) {
  std::vector<ParamInfo> infos;
  for (const auto& [name, p] : parameters) infos.push_back({name, p.dim()});
  auto owner = AssignParamGroups(infos, groups);
  if (!owner.ok()) return owner.status();
  std::unique_ptr<DynamicSparsityController> c(new DynamicSparsityController());
  c->groups_ = groups;
  c->optimizer_ = optimizer;
  c->seed_ = seed;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto& [name, p] = parameters[i];
    DynamicPlanEntry entry;
    entry.name = name;
    entry.shape = p.sizes().vec();
    entry.group = (*owner)[i];
    if (entry.group >= 0) {
      const DynamicSparsityGroup& g = groups[entry.group];
      if (auto st = CheckBlocks(g, entry.group, name, p); !st.ok()) return st;
      entry.algorithm = g.algorithm;
      entry.sparsity = DescribeSchedule(g.sparsity);
      const bool drops = g.algorithm == DynamicAlgorithm::kSet || g.algorithm == DynamicAlgorithm::kRigl;
      entry.drop_fraction = drops ? DescribeSchedule(g.drop_fraction) : "";
      entry.init_method = g.init_method;
      entry.update = g.update;
      entry.blocks = {std::max(1, g.balance_out_groups), std::max(1, g.balance_in_groups)};
      Layer layer;
      layer.name = name;
      layer.param = p;
      layer.group = entry.group;
      layer.blocks = entry.blocks;
      layer.index = static_cast<int>(c->layers_.size());
      c->layers_.push_back(layer);
    }
    c->plan_.push_back(entry);
  }
  for (Layer& layer : c->layers_) {
    if (c->groups_[layer.group].update.start == 0) c->Init(layer);
  }
  return c;
}

uint64_t DynamicSparsityController::SeedFor(const Layer& layer, int64_t step) const {
  return SplitMix(SplitMix(seed_ ^ SplitMix(static_cast<uint64_t>(layer.index))) +
                  static_cast<uint64_t>(step));
}

void DynamicSparsityController::SetMask(Layer& layer, torch::Tensor mask) {
  torch::NoGradGuard no_grad;
  if (layer.mask.defined()) {
    // Newly active weights start at zero.
    layer.param.masked_fill_(mask.gt(0) & layer.mask.eq(0), 0.0);
  }
  layer.param.mul_(mask);
  MaskOptimizerState(optimizer_, layer.param, mask);
  layer.mask = std::move(mask);
}

void DynamicSparsityController::Init(Layer& layer) {
  const DynamicSparsityGroup& g = groups_[layer.group];
  const double sparsity = ScheduleValue(g.sparsity, g.update.start);
  SetMask(layer, dynamic::InitialMask(layer.param, sparsity, ToInit(g.init_method), layer.blocks,
                                      SeedFor(layer, g.update.start)));
}

void DynamicSparsityController::Update(Layer& layer, int64_t step) {
  const DynamicSparsityGroup& g = groups_[layer.group];
  const double sparsity = ScheduleValue(g.sparsity, step);
  switch (g.algorithm) {
    case DynamicAlgorithm::kStatic:
      return;
    case DynamicAlgorithm::kGmp:
      SetMask(layer, dynamic::PruneByMagnitude(layer.param, layer.mask, sparsity, layer.blocks));
      return;
    case DynamicAlgorithm::kSet:
    case DynamicAlgorithm::kRigl: {
      torch::Tensor score;
      if (g.algorithm == DynamicAlgorithm::kSet) {
        score = dynamic::RandomScores(layer.param, SeedFor(layer, step));
      } else if (layer.dense_grad.defined()) {
        score = layer.dense_grad;
      } else {  // AfterBackward was not called on this step: the (masked) gradient is all there is.
        score = layer.param.grad().defined() ? layer.param.grad().detach() : torch::zeros_like(layer.param);
      }
      SetMask(layer, dynamic::DropAndGrow(layer.param, layer.mask, score, sparsity,
                                          ScheduleValue(g.drop_fraction, step), layer.blocks));
      layer.dense_grad = torch::Tensor();
      return;
    }
  }
}

void DynamicSparsityController::AfterBackward(int64_t step) {
  torch::NoGradGuard no_grad;
  for (Layer& layer : layers_) {
    torch::Tensor grad = layer.param.grad();
    if (!layer.mask.defined() || !grad.defined()) continue;
    const DynamicSparsityGroup& g = groups_[layer.group];
    if (g.algorithm == DynamicAlgorithm::kRigl && g.update.IsUpdateStep(step)) {
      layer.dense_grad = grad.detach().clone();
    }
    grad.mul_(layer.mask);
  }
}

void DynamicSparsityController::AfterOptimizerStep(int64_t step) {
  torch::NoGradGuard no_grad;
  for (Layer& layer : layers_) {
    const DynamicSparsityGroup& g = groups_[layer.group];
    if (!layer.mask.defined()) {
      if (step + 1 >= g.update.start) Init(layer);
      continue;
    }
    layer.param.mul_(layer.mask);
    if (g.update.IsUpdateStep(step)) Update(layer, step);
  }
}

std::vector<DynamicLayerReport> DynamicSparsityController::Report(int64_t step) const {
  std::vector<DynamicLayerReport> out;
  for (const Layer& layer : layers_) {
    const DynamicSparsityGroup& g = groups_[layer.group];
    DynamicLayerReport r;
    r.name = layer.name;
    r.algorithm = g.algorithm;
    if (step >= g.update.start) {
      const int64_t at = g.algorithm == DynamicAlgorithm::kStatic ? g.update.start : step;
      r.target_sparsity = ScheduleValue(g.sparsity, at);
    }
    r.actual_sparsity = MaskSparsity(layer.mask);
    out.push_back(r);
  }
  return out;
}

DynamicSparsityController::NamedParameters DynamicSparsityController::StateDict() const {
  NamedParameters out;
  for (const Layer& layer : layers_) {
    if (layer.mask.defined()) out.emplace_back(layer.name, layer.mask.detach().clone());
  }
  return out;
}

absl::Status DynamicSparsityController::LoadStateDict(const NamedParameters& masks) {
  for (const auto& [name, mask] : masks) {
    auto it = std::find_if(layers_.begin(), layers_.end(), [&](const Layer& l) { return l.name == name; });
    if (it == layers_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint has a dynamic sparsity mask for ", name,
                       ", which no group of this run's sparsity.dynamic selects"));
    }
    if (mask.sizes() != it->param.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint mask of ", name, " has shape ",
                                                     ShapeText(mask.sizes()), ", the parameter ",
                                                     ShapeText(it->param.sizes())));
    }
  }
  for (Layer& layer : layers_) layer.mask = torch::Tensor();  // Dense unless the checkpoint says otherwise.
  for (const auto& [name, mask] : masks) {
    auto it = std::find_if(layers_.begin(), layers_.end(), [&](const Layer& l) { return l.name == name; });
    torch::NoGradGuard no_grad;
    it->mask = mask.to(it->param.device(), it->param.scalar_type());
    it->param.mul_(it->mask);
  }
  return absl::OkStatus();
}

torch::Tensor DynamicSparsityController::MaskOf(const std::string& name) const {
  for (const Layer& layer : layers_) {
    if (layer.name == name) return layer.mask;
  }
  return torch::Tensor();
}

std::string DynamicSparsityController::FormatPlan() const {
  std::ostringstream out;
  out << "dynamic sparsity (§7): " << layers_.size() << " of " << plan_.size() << " parameters sparsified\n";
  for (const DynamicPlanEntry& e : plan_) {
    out << "  " << e.name << " " << ShapeText(e.shape) << ": ";
    if (e.group < 0) {
      out << "dense\n";
      continue;
    }
    out << "group " << e.group << " " << ToString(e.algorithm) << " sparsity " << e.sparsity;
    if (!e.drop_fraction.empty()) out << ", drop_fraction " << e.drop_fraction;
    out << ", init " << ToString(e.init_method) << ", update every " << e.update.freq << " from step "
        << e.update.start;
    if (e.update.stop > 0) out << " until " << e.update.stop;
    if (e.blocks.out_groups > 1 || e.blocks.in_groups > 1) {
      out << ", balanced " << e.blocks.out_groups << "x" << e.blocks.in_groups << " (out x in)";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace nmsparse
