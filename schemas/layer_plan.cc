#include "schemas/layer_plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/model_catalog.h"
#include "schemas/model_resolution.h"
#include "schemas/param_filter.h"
#include "schemas/semi_structured_layers.h"
#include "schemas/step_schedule.h"
#include "schemas/structure_decay.h"
#include "schemas/trained_epochs.h"

namespace nmsparse {
namespace {

std::string NMText(const NM& nm) { return absl::StrCat(nm.n, ":", nm.m); }

std::string SparseText(const SparsityConfig& s, const NM& nm, bool hard) {
  switch (s.sparsity_type) {
    case SparsityType::kSrste:
      return "SR-STE " + NMText(nm);
    case SparsityType::kSste:
      return "S-STE " + NMText(nm);
    case SparsityType::kStep:
      return "STEP " + NMText(nm) + " after its switch";
    case SparsityType::kHu24:
      return "HU24 transposable " + NMText(nm);
    case SparsityType::kBimask:
      return "Bi-Mask " + NMText(nm) + " (permuted backward mask)";
    case SparsityType::kUnstructured:
      return absl::StrCat("prune ", std::round(s.prune_rate * 1000) / 10, "%");
    default:
      if (hard) return NMText(nm) + " hard";
      if (s.decay_type == DecayType::kLinear) return NMText(nm) + " MDGF-Linear";
      if (s.decay_type == DecayType::kExp) return NMText(nm) + " MDGF-Exp";
      return NMText(nm);
  }
}

void Add(std::vector<LayerPlanStage>* stages, int start, int end, const std::string& phase, NM nm,
         const std::string& text) {
  if (end > start) stages->push_back({start, end, phase, nm, text});
}

// The timeline of dense_steps / structure decay / fine_tune_steps (§3, §4).
// The phases over `span` epochs (T), continued to the run's `total` (worker/sparsity/phase_schedule.h).
std::vector<LayerPlanStage> DefaultTimeline(const SparsityConfig& s, int span, int total, NM target) {
  std::vector<LayerPlanStage> stages;
  const int d = DenseEpochs(s, span);
  const int f = FineTuneEpochs(s, span);
  // Fine-tune covers epochs > T - f (strictly greater, as the reference does), after T too.
  const int fine_start = std::min(total, std::max(d, span - f + 1));
  const auto decay = !FollowsStructureDecay(s.sparsity_type) ? std::vector<std::pair<int, NM>>{{d, target}}
                                                             : StructureDecayStages(s, span, target);
  Add(&stages, 0, d, "dense", {0, 0}, "dense");
  for (size_t i = 0; i < decay.size(); ++i) {
    const int start = decay[i].first;
    const int end = std::min(fine_start, i + 1 < decay.size() ? decay[i + 1].first : total);
    Add(&stages, start, end, "sparse", decay[i].second, SparseText(s, decay[i].second, false));
  }
  const NM last = decay.back().second;
  Add(&stages, fine_start, total, "fine_tune", last,
      SparseText(s, last, FollowsStructureDecay(s.sparsity_type)));
  return stages;
}

}  // namespace

std::vector<std::pair<int, int>> PhaseEpochs(const SparsityConfig& s, int span, int total) {
  std::vector<std::pair<int, int>> epochs;
  double sum = 0.0;
  for (size_t i = 0; i < s.phases.size(); ++i) {
    const int start = static_cast<int>(sum * span);
    sum += s.phases[i].fraction;
    epochs.emplace_back(start, i + 1 == s.phases.size() ? total : static_cast<int>(sum * span));
  }
  return epochs;
}

namespace {

std::vector<LayerPlanStage> PhaseTimeline(const SparsityConfig& s, int span, int total, NM target) {
  std::vector<LayerPlanStage> stages;
  const std::vector<std::pair<int, int>> epochs = PhaseEpochs(s, span, total);
  for (size_t i = 0; i < s.phases.size(); ++i) {
    const auto [start, end] = epochs[i];
    switch (s.phases[i].kind) {
      case PhaseKind::kDense:
        Add(&stages, start, end, "dense", {0, 0}, "dense");
        break;
      case PhaseKind::kSparse:
        Add(&stages, start, end, "sparse", target, SparseText(s, target, false));
        break;
      case PhaseKind::kFineTune:
        Add(&stages, start, end, "fine_tune", target,
            SparseText(s, target, s.sparsity_type != SparsityType::kSrste));
        break;
    }
  }
  return stages;
}

// Dynamic sparsity (§7): every parameter of the model in module order, with the algorithm and sparsity of the
// group that takes it (the first whose filter matches) over all epochs, or "dense" when no group does.
// SRIGL (docs/sparsity-method.md §7.1): the constant fan-in it starts from, int(numel (1 - s)) // rows, as
// worker/sparsity/dynamic/const_fan_in.h counts it, and that it is not N:M.
std::string SriglFanIn(const DynamicSparsityGroup& g, const std::vector<int64_t>& shape) {
  if (g.algorithm != DynamicAlgorithm::kSrigl || shape.empty()) return "";
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const double density = 1.0 - ScheduleValue(g.sparsity, 0);
  const int64_t fan_in =
      static_cast<int64_t>(static_cast<double>(numel) * density) / std::max<int64_t>(1, shape[0]);
  return absl::StrCat(", constant fan-in ", fan_in, " per output neuron, not M-grouped N:M");
}

absl::StatusOr<std::vector<LayerPlanRow>> DynamicRows(const ExperimentConfig& config, const ModelArch& arch) {
  const auto& groups = config.sparsity.dynamic;
  const auto params = ModelParameters(arch);
  std::vector<ParamInfo> infos;
  for (const ParameterShape& p : params) infos.push_back({p.name, static_cast<int64_t>(p.shape.size())});
  auto owner = AssignParamGroups(infos, groups);
  if (!owner.ok()) return owner.status();
  const std::vector<SparsityLocation> all = {SparsityLocation::kFF, SparsityLocation::kQ,
                                             SparsityLocation::kO, SparsityLocation::kC};
  std::map<std::string, SparsityLocation> locations;
  for (const LayerShape& layer : SparsifiableLayers(arch, all)) locations.emplace(layer.name, layer.location);
  std::vector<LayerPlanRow> rows;
  for (size_t i = 0; i < params.size(); ++i) {
    LayerPlanRow row{params[i].name, SparsityLocation::kFF, params[i].shape, 0, {}};
    auto loc = locations.find(params[i].name);
    row.has_location = loc != locations.end();
    if (row.has_location) row.location = loc->second;
    const int g = (*owner)[i];
    if (g < 0) {
      Add(&row.stages, 0, TrainedEpochs(config.schedule), "dense", {0, 0}, "dense");
    } else {
      Add(&row.stages, 0, TrainedEpochs(config.schedule), "sparse", {0, 0},
          absl::StrCat(ToString(groups[g].algorithm), " ", DescribeSchedule(groups[g].sparsity),
                       SriglFanIn(groups[g], params[i].shape), " (group ", g, ")"));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<ModelArch> ArchOf(const ExperimentConfig& config) { return ResolveModel(config.model); }

}  // namespace

absl::StatusOr<std::string> DescribeSemiStructuredLayers(const ExperimentConfig& config) {
  if (!config.semi_structured.Enabled()) return std::string();
  auto arch = ArchOf(config);
  if (!arch.ok()) return arch.status();
  auto chosen = ChooseSemiStructuredLayers(config.semi_structured, config.sparsity, *arch);
  if (!chosen.ok()) return chosen.status();
  return FormatSemiStructuredChoices(config.semi_structured, *chosen);
}

absl::StatusOr<std::vector<LayerPlanRow>> DescribeLayerPlan(const ExperimentConfig& config) {
  auto arch = ArchOf(config);
  if (!arch.ok()) return arch.status();
  const SparsityConfig& s = config.sparsity;
  std::vector<LayerPlanRow> rows;
  if (s.sparsity_type == SparsityType::kDense) return rows;
  if (s.IsDynamic()) return DynamicRows(config, *arch);
  for (const LayerShape& layer : SparsifiableLayers(*arch, s.locations)) {
    LayerPlanRow row{layer.name, layer.location, layer.shape, layer.row_offset, {}};
    NM target = TargetFor(s, layer.location);
    if (s.sparsity_type == SparsityType::kUnstructured) target = {0, 0};
    row.stages = RunTimeline(config, target);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<LayerPlanStage> RunTimeline(const ExperimentConfig& config, NM target) {
  const SparsityConfig& s = config.sparsity;
  const int span = SparsityEpochs(config.schedule), total = TrainedEpochs(config.schedule);
  return s.phases.empty() ? DefaultTimeline(s, span, total, target) : PhaseTimeline(s, span, total, target);
}

std::string FormatLayerPlan(const std::vector<LayerPlanRow>& rows) {
  if (rows.empty()) return "no sparse layers (dense run)\n";
  size_t name_width = 5;
  for (const auto& row : rows) name_width = std::max(name_width, row.name.size());
  std::string out;
  for (const auto& row : rows) {
    std::vector<std::string> dims;
    for (int64_t d : row.shape) dims.push_back(absl::StrCat(d));
    std::string name = row.name;
    name.resize(name_width, ' ');
    std::string shape = "[" + absl::StrJoin(dims, ", ") + "]";
    shape.resize(std::max<size_t>(shape.size(), 16), ' ');
    std::string loc = row.has_location ? ToString(row.location) : "-";
    loc.resize(3, ' ');
    std::vector<std::string> stages;
    for (const auto& st : row.stages) {
      stages.push_back(absl::StrCat("epochs ", st.start_epoch, "-", st.end_epoch - 1, ": ", st.text));
    }
    absl::StrAppend(&out, name, "  ", loc, shape, "  ", absl::StrJoin(stages, "; "), "\n");
  }
  return out;
}

}  // namespace nmsparse
