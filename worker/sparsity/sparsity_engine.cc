#include "worker/sparsity/sparsity_engine.h"

#include <torch/nn/module.h>
#include <torch/types.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "schemas/structure_decay.h"
#include "worker/sparsity/decay.h"
#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/phase_schedule.h"
#include "worker/sparsity/sparse_functions.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

// N:M targets by start epoch, in order; the last one holds to the end.
using StageTable = std::vector<std::pair<int, NM>>;

struct EngineLayer {
  std::string name;
  std::vector<SparsityLocation> block_locations;  // One per row block.
  torch::Tensor weight;                           // The module's parameter (shares storage).
  std::shared_ptr<LayerRule> rule;                // Shared with the module, mutated in place.
};

std::string NMString(NM nm) { return absl::StrCat(nm.n, ":", nm.m); }

// "ff", "q", ... as metrics name locations.
std::string LocationName(SparsityLocation loc) { return absl::AsciiStrToLower(ToString(loc)); }

// What a report calls the sparsity a rule gives a block.
std::string TargetName(bool sparse, bool unstructured, double prune_rate, NM nm) {
  if (!sparse) return "dense";
  return unstructured ? absl::StrCat("unstructured ", prune_rate) : NMString(nm);
}

bool IsQkv(SparsityLocation loc) {
  return loc == SparsityLocation::kQ || loc == SparsityLocation::kK || loc == SparsityLocation::kV;
}

// `name` is `pattern` or ends with "." + pattern.
bool NameMatches(const std::string& name, const std::string& pattern) {
  return name == pattern || absl::EndsWith(name, "." + pattern);
}

// The locations of a module's row blocks by its timm name; empty when it is not sparsifiable.
std::vector<SparsityLocation> BlockLocationsOf(const std::string& name) {
  if (NameMatches(name, "mlp.fc1") || NameMatches(name, "mlp.fc2")) return {SparsityLocation::kFF};
  if (NameMatches(name, "attn.qkv"))
    return {SparsityLocation::kQ, SparsityLocation::kK, SparsityLocation::kV};
  if (NameMatches(name, "attn.proj")) return {SparsityLocation::kO};
  if (NameMatches(name, "patch_embed.proj")) return {SparsityLocation::kC};
  return {};
}

// SDGF applies to STRUCTURED_NM only; SR-STE and unstructured ignore it (spec §2, §4).
bool UsesStructureDecay(const SparsityConfig& config) {
  return config.structure_decay_flag && FollowsStructureDecay(config.sparsity_type);
}

// Every N:M `target` goes through (the SDGF stages, or the target alone).
StageTable StagesFor(const SparsityConfig& config, NM target, int total_epochs) {
  if (!UsesStructureDecay(config)) return {{0, target}};
  return StructureDecayStages(config, total_epochs, target);
}

// The N:M in force at `epoch`, derived from the epoch alone (survives a resume).
NM StageAt(const SparsityConfig& config, int total_epochs, NM target, int epoch) {
  return UsesStructureDecay(config) ? StageAtEpoch(config, total_epochs, target, epoch) : target;
}

std::vector<int64_t> BlockShape(const torch::Tensor& weight, size_t blocks) {
  std::vector<int64_t> shape(weight.sizes().begin(), weight.sizes().end());
  shape[0] /= static_cast<int64_t>(blocks);
  return shape;
}

}  // namespace

struct SparsityEngine::State {
  SparsityConfig config;
  int64_t steps_per_epoch = 1;
  PhaseSchedule schedule;
  std::vector<EngineLayer> layers;
  SparsitySummary summary;
};

namespace {

// Finds the module's weight and installs `rule` if it is a sparse layer; error otherwise.
absl::Status Attach(const std::string& name, torch::nn::Module& module,
                    const std::shared_ptr<LayerRule>& rule, torch::Tensor& weight) {
  if (auto* linear = dynamic_cast<SparseLinearImpl*>(&module)) {
    linear->set_rule(rule);
    weight = linear->weight;
    return absl::OkStatus();
  }
  if (auto* conv = dynamic_cast<SparseConv2dImpl*>(&module)) {
    conv->set_rule(rule);
    weight = conv->weight;
    rule->is_conv = true;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("layer ", name, " (", module.name(),
                                                 ") is at a sparsity location but is not a SparseLinear or "
                                                 "SparseConv2d, so it cannot be sparsified"));
}

absl::Status ValidateLayer(const EngineLayer& layer, const SparsityConfig& config, const StageTable& stages,
                           const StageTable& stages_qkv) {
  const size_t blocks = layer.block_locations.size();
  if (layer.weight.size(0) % static_cast<int64_t>(blocks) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("layer ", layer.name, ": ", layer.weight.size(0),
                                                   " output rows cannot be split into ", blocks, " blocks"));
  }
  if (config.sparsity_type == SparsityType::kUnstructured) return absl::OkStatus();
  const std::vector<int64_t> shape = BlockShape(layer.weight, blocks);
  for (size_t b = 0; b < blocks; ++b) {
    if (!layer.rule->blocks[b].sparse) continue;
    const SparsityLocation loc = layer.block_locations[b];
    const std::string block_name =
        blocks > 1 ? absl::StrCat(layer.name, " (", LocationName(loc), " block)") : layer.name;
    for (const auto& [start, nm] : IsQkv(loc) ? stages_qkv : stages) {
      if (absl::Status s = ValidateNM(block_name, shape, nm); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// The layers at the configured locations, with dense rules attached.
absl::StatusOr<std::vector<EngineLayer>> CollectLayers(const SparsityConfig& config,
                                                       torch::nn::Module& model) {
  std::vector<EngineLayer> layers;
  std::vector<bool> location_found(static_cast<int>(SparsityLocation::kC) + 1, false);
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    std::vector<SparsityLocation> locs = BlockLocationsOf(item.key());
    bool any = false;
    for (SparsityLocation loc : locs) any = any || config.HasLocation(loc);
    if (!any) continue;
    EngineLayer layer{item.key(), locs, torch::Tensor(), std::make_shared<LayerRule>()};
    layer.rule->blocks.clear();
    for (SparsityLocation loc : locs) {
      layer.rule->blocks.push_back(
          BlockRule{config.HasLocation(loc), IsQkv(loc) ? config.nm_qkv : config.nm});
      if (config.HasLocation(loc)) location_found[static_cast<int>(loc)] = true;
    }
    layer.rule->sparse_dim = config.sparse_dim;
    layer.rule->srste_lambda = config.srste_lambda;
    layer.rule->unstructured = config.sparsity_type == SparsityType::kUnstructured;
    layer.rule->prune_rate = config.prune_rate;
    if (absl::Status s = Attach(layer.name, *item.value(), layer.rule, layer.weight); !s.ok()) return s;
    layers.push_back(std::move(layer));
  }
  for (SparsityLocation loc : config.locations) {
    if (!location_found[static_cast<int>(loc)]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sparsity_loc ", ToString(loc), " matches no SparseLinear/SparseConv2d layer of the model"));
    }
  }
  return layers;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SparsityEngine>> SparsityEngine::Create(
    const SparsityConfig& config, int total_epochs, int64_t steps_per_epoch, torch::nn::Module& model,
    int span_epochs, const torch::Tensor& srste_term_scale) {
  if (steps_per_epoch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("steps per epoch ", steps_per_epoch, " must be >= 1"));
  }
  if (config.sparsity_type == SparsityType::kUnstructured &&
      !(config.prune_rate >= 0.0 && config.prune_rate <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("prune_rate: ", config.prune_rate, " is out of range [0, 1]"));
  }
  auto schedule = PhaseSchedule::Create(config, total_epochs, span_epochs);
  if (!schedule.ok()) return schedule.status();
  const int span = schedule->span_epochs();
  auto state = std::make_unique<State>();
  state->config = config;
  state->steps_per_epoch = steps_per_epoch;
  state->schedule = *std::move(schedule);
  if (config.sparsity_type != SparsityType::kDense) {
    const StageTable stages = StagesFor(config, config.nm, span);
    const StageTable stages_qkv = StagesFor(config, config.nm_qkv, span);
    auto layers = CollectLayers(config, model);
    if (!layers.ok()) return layers.status();
    state->layers = *std::move(layers);
    if (srste_term_scale.defined()) {
      const auto shared = std::make_shared<const torch::Tensor>(srste_term_scale);
      for (EngineLayer& layer : state->layers) layer.rule->srste_term_scale = shared;
    }
    for (const EngineLayer& layer : state->layers) {
      if (absl::Status s = ValidateLayer(layer, config, stages, stages_qkv); !s.ok()) return s;
    }
  }
  return std::unique_ptr<SparsityEngine>(new SparsityEngine(std::move(state)));
}

SparsityEngine::SparsityEngine(std::unique_ptr<State> state) : state_(std::move(state)) {}
SparsityEngine::~SparsityEngine() = default;

void SparsityEngine::BeginStep(int epoch, int64_t global_step) {
  State& s = *state_;
  const SparsityConfig& config = s.config;
  const PhaseState phase = s.schedule.At(epoch, global_step, s.steps_per_epoch);
  const bool sparse = config.sparsity_type != SparsityType::kDense && phase.kind != PhaseKind::kDense;
  const bool srste = config.sparsity_type == SparsityType::kSrste;
  const bool hard = srste || phase.kind == PhaseKind::kFineTune;
  const double decay =
      !sparse ? 1.0
      : hard  ? 0.0
              : DecayValue(config.decay_type, config.decay_coef, static_cast<double>(phase.sparse_step));
  const int span = s.schedule.span_epochs();  // The last SDGF stage holds through the cooldown.
  const NM nm = sparse ? StageAt(config, span, config.nm, epoch) : config.nm;
  const NM nm_qkv = sparse ? StageAt(config, span, config.nm_qkv, epoch) : config.nm_qkv;
  for (EngineLayer& layer : s.layers) {
    LayerRule& rule = *layer.rule;
    rule.recipe = !sparse ? Recipe::kDense : srste ? Recipe::kSrste : Recipe::kDecay;
    rule.decay = static_cast<float>(decay);
    for (size_t b = 0; b < rule.blocks.size(); ++b) {
      rule.blocks[b].nm = IsQkv(layer.block_locations[b]) ? nm_qkv : nm;
    }
  }
  SparsitySummary& sum = s.summary;
  sum.phase = PhaseName(config.sparsity_type == SparsityType::kDense ? PhaseKind::kDense : phase.kind);
  const bool unstructured = config.sparsity_type == SparsityType::kUnstructured;
  sum.nm = TargetName(sparse, unstructured, config.prune_rate, nm);
  sum.nm_qkv = TargetName(sparse, unstructured, config.prune_rate, nm_qkv);
  sum.decay = decay;
  sum.sparse_step = sparse ? phase.sparse_step : 0;
  sum.epoch = epoch;
  sum.global_step = global_step;
}

void SparsityEngine::MaskWeightsAtTarget() {
  torch::NoGradGuard no_grad;
  const SparsityConfig& config = state_->config;
  for (EngineLayer& layer : state_->layers) {
    LayerRule& rule = *layer.rule;
    rule.recipe = Recipe::kDecay;
    rule.decay = 0.f;
    for (size_t b = 0; b < rule.blocks.size(); ++b) {
      rule.blocks[b].nm = IsQkv(layer.block_locations[b]) ? config.nm_qkv : config.nm;
    }
    layer.weight.copy_(SparseWeightOf(layer.weight, rule, /*pruned_value=*/0.f));
  }
}

std::vector<SparseLayerReport> SparsityEngine::Report() const {
  torch::NoGradGuard no_grad;
  std::vector<SparseLayerReport> reports;
  std::vector<torch::Tensor> zeros;  // Per block, on the weight's device: read in one copy below.
  std::vector<int64_t> block_numels;
  for (const EngineLayer& layer : state_->layers) {
    const LayerRule& rule = *layer.rule;
    const torch::Tensor effective = ApplyLayerRule(layer.weight, &rule);
    const int64_t blocks = static_cast<int64_t>(rule.blocks.size());
    const int64_t rows = layer.weight.size(0) / blocks;
    for (int64_t b = 0; b < blocks; ++b) {
      const bool sparse = rule.recipe != Recipe::kDense && rule.blocks[b].sparse;
      SparseLayerReport r;
      r.name = layer.name;
      r.location = LocationName(layer.block_locations[b]);
      r.shape = BlockShape(layer.weight, rule.blocks.size());
      r.target = TargetName(sparse, rule.unstructured, rule.prune_rate, rule.blocks[b].nm);
      r.decay = !sparse ? 1.0 : rule.recipe == Recipe::kSrste ? 0.0 : rule.decay;
      const torch::Tensor block = effective.narrow(0, b * rows, rows);
      zeros.push_back(block.eq(0).sum());
      block_numels.push_back(block.numel());
      reports.push_back(std::move(r));
    }
  }
  if (reports.empty()) return reports;
  // One device-to-host read for the whole report (a log point's), not one per block.
  const torch::Tensor counts = torch::stack(zeros).to(torch::kCPU, torch::kDouble);
  const double* count = counts.data_ptr<double>();
  for (size_t i = 0; i < reports.size(); ++i) {
    reports[i].zero_fraction = block_numels[i] > 0 ? count[i] / static_cast<double>(block_numels[i]) : 0.0;
  }
  return reports;
}

std::vector<LocationReport> SparsityEngine::ReportByLocation() const {
  std::vector<LocationReport> out;
  for (const SparseLayerReport& r : Report()) {
    int64_t numel = 1;
    for (int64_t d : r.shape) numel *= d;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const LocationReport& l) { return l.location == r.location; });
    if (it == out.end()) {
      out.push_back(LocationReport{r.location, r.target, r.decay, 0, 0.0});
      it = out.end() - 1;
    }
    it->zero_fraction = (it->zero_fraction * it->numel + r.zero_fraction * numel) / (it->numel + numel);
    it->numel += numel;
  }
  return out;
}

SparsitySummary SparsityEngine::Summary() const { return state_->summary; }

std::vector<std::string> SparsityEngine::SparseLayerNames() const {
  std::vector<std::string> names;
  for (const EngineLayer& layer : state_->layers) names.push_back(layer.name);
  return names;
}

}  // namespace nmsparse
