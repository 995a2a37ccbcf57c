#include "worker/sparsity/dynamic/dynamic_sparsity_controller.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/param_filter.h"
#include "schemas/step_schedule.h"
#include "worker/compat/torch_compat.h"
#include "worker/sparsity/dynamic/const_fan_in.h"

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

// The checkpoint name of a SRIGL layer's dense gradient while it accumulates.
constexpr char kDenseGradPrefix[] = "srigl_dense_grad/";

bool IsSrigl(const DynamicSparsityGroup& g) { return g.algorithm == DynamicAlgorithm::kSrigl; }

// SRIGL's T_end: update.stop, else int(t_end x the run's optimizer steps) (never, when unknown).
int64_t SriglTEnd(const DynamicSparsityGroup& g, int64_t total_steps) {
  if (g.update.stop > 0) return g.update.stop;
  if (total_steps <= 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(g.t_end * static_cast<double>(total_steps));
}

bool MatchesAny(const std::vector<std::string>& globs, const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return GlobMatch(g, name); });
}

double MaskSparsity(const torch::Tensor& mask) {
  if (!mask.defined() || mask.numel() == 0) return 0.0;
  return 1.0 - mask.sum().item<double>() / static_cast<double>(mask.numel());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DynamicSparsityController>> DynamicSparsityController::Create(
    const std::vector<DynamicSparsityGroup>& groups, const NamedParameters& parameters,
    torch::optim::Optimizer* optimizer, uint64_t seed, int64_t total_steps) {
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
      const bool drops =
          g.algorithm == DynamicAlgorithm::kSet || g.algorithm == DynamicAlgorithm::kRigl || IsSrigl(g);
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
      layer.t_end = SriglTEnd(g, total_steps);
      layer.ablation = IsSrigl(g) && g.dynamic_ablation && !MatchesAny(g.no_ablation_filter, name);
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
  // SRigL's authors reset SGD momentum only: Adam's moments of regrown weights carry over.
  if (!IsSrigl(groups_[layer.group]) || dynamic_cast<torch::optim::SGD*>(optimizer_) != nullptr) {
    MaskOptimizerState(optimizer_, layer.param, mask);
  }
  layer.mask = std::move(mask);
}

void DynamicSparsityController::Init(Layer& layer) {
  const DynamicSparsityGroup& g = groups_[layer.group];
  const double sparsity = ScheduleValue(g.sparsity, g.update.start);
  if (IsSrigl(g)) {
    SetMask(layer, dynamic::InitialConstFanInMask(layer.param, sparsity, SeedFor(layer, g.update.start)));
    return;
  }
  SetMask(layer, dynamic::InitialMask(layer.param, sparsity, ToInit(g.init_method), layer.blocks,
                                      SeedFor(layer, g.update.start)));
}

void DynamicSparsityController::UpdateSrigl(Layer& layer, int64_t step) {
  const DynamicSparsityGroup& g = groups_[layer.group];
  const int64_t u = step + 1;
  dynamic::ConstFanInUpdate update;
  update.sparsity = ScheduleValue(g.sparsity, step);
  update.drop_fraction =
      g.drop_fraction.type == StepSchedule::Type::kConstant
          ? ScheduleValue(dynamic::SriglDropFraction(g.drop_fraction.value, layer.t_end), u)
          : ScheduleValue(g.drop_fraction, u);
  update.ablation = layer.ablation;
  update.min_salient_weights_per_neuron = g.min_salient_weights_per_neuron;
  torch::Tensor score = layer.dense_grad;
  if (!score.defined()) {  // AfterBackward was not called in the window: the (masked) gradient is all there
                           // is.
    score = layer.param.grad().defined() ? layer.param.grad().detach() : torch::zeros_like(layer.param);
  }
  SetMask(layer, dynamic::ConstFanInDropAndGrow(layer.param, layer.mask, score, update));
  layer.dense_grad = torch::Tensor();
}

void DynamicSparsityController::Update(Layer& layer, int64_t step) {
  const DynamicSparsityGroup& g = groups_[layer.group];
  const double sparsity = ScheduleValue(g.sparsity, step);
  switch (g.algorithm) {
    case DynamicAlgorithm::kStatic:
      return;
    case DynamicAlgorithm::kSrigl:
      UpdateSrigl(layer, step);
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
    if (IsSrigl(g) &&
        dynamic::SriglAccumulatesAt(step + 1, g.update.freq, g.grad_accumulation_n, layer.t_end)) {
      const torch::Tensor part = grad.detach() / static_cast<double>(g.grad_accumulation_n);
      layer.dense_grad = layer.dense_grad.defined() ? layer.dense_grad.add_(part) : part;
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
    const bool update = IsSrigl(g) ? step + 1 > g.update.start &&
                                         dynamic::SriglUpdatesAt(step + 1, g.update.freq, layer.t_end)
                                   : g.update.IsUpdateStep(step);
    if (update) Update(layer, step);
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
  for (const Layer& layer : layers_) {
    if (IsSrigl(groups_[layer.group]) && layer.dense_grad.defined()) {
      out.emplace_back(kDenseGradPrefix + layer.name, layer.dense_grad.detach().clone());
    }
  }
  return out;
}

absl::Status DynamicSparsityController::LoadStateDict(const NamedParameters& state) {
  NamedParameters masks, dense_grads;
  for (const auto& entry : state) {
    const bool grad = absl::StartsWith(entry.first, kDenseGradPrefix);
    (grad ? dense_grads : masks)
        .emplace_back(grad ? entry.first.substr(sizeof(kDenseGradPrefix) - 1) : entry.first, entry.second);
  }
  for (const auto& [name, mask] : dense_grads) {
    auto it = std::find_if(layers_.begin(), layers_.end(), [&](const Layer& l) { return l.name == name; });
    if (it == layers_.end() || !IsSrigl(groups_[it->group]) || mask.sizes() != it->param.sizes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint has a SRIGL dense gradient for ", name, " of shape ",
                       ShapeText(mask.sizes()), ", which no SRIGL group of this run selects at that shape"));
    }
  }
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
  for (Layer& layer : layers_) layer.dense_grad = torch::Tensor();
  for (const auto& [name, grad] : dense_grads) {
    auto it = std::find_if(layers_.begin(), layers_.end(), [&](const Layer& l) { return l.name == name; });
    it->dense_grad = grad.to(it->param.device(), it->param.scalar_type());
  }
  return absl::OkStatus();
}

std::vector<ParameterDensity> DynamicSparsityController::StepDensities(int64_t step) const {
  std::vector<ParameterDensity> out;
  for (const Layer& layer : layers_) {
    if (!layer.mask.defined()) continue;
    const DynamicSparsityGroup& g = groups_[layer.group];
    const double density = 1.0 - ScheduleValue(g.sparsity, step);
    const bool dense_gradient =
        IsSrigl(g) ? dynamic::SriglAccumulatesAt(step + 1, g.update.freq, g.grad_accumulation_n, layer.t_end)
                   : g.algorithm == DynamicAlgorithm::kRigl && g.update.IsUpdateStep(step);
    out.push_back({layer.name, density, dense_gradient ? 1.0 : density});
  }
  return out;
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
    if (e.algorithm == DynamicAlgorithm::kSrigl) {
      const Layer& l =
          *std::find_if(layers_.begin(), layers_.end(), [&](const Layer& x) { return x.name == e.name; });
      const int64_t rows = e.shape.empty() ? 1 : e.shape[0];
      const int64_t numel = l.param.numel();
      out << " (alpha, cosine to 0 at T_end " << l.t_end << "), constant fan-in "
          << dynamic::ConstFanIn(numel, ScheduleValue(groups_[e.group].sparsity, 0), rows)
          << " per output neuron (not M-grouped N:M), neuron ablation " << (l.ablation ? "on" : "off")
          << ", dense gradient over " << groups_[e.group].grad_accumulation_n << " steps";
    }
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
