#include "cli/run_preview.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cli/deploy_warnings.h"
#include "cli/row_summary.h"
#include "schemas/train_steps.h"
#include "schemas/trained_epochs.h"

namespace nmsparse::cli {
namespace {

std::string OptimizerLine(const ExperimentConfig& c) {
  const OptimizerConfig& o = c.optimizer;
  return absl::StrFormat(
      "  optimizer %s: lr %g (as trained: after a reference config's lr_base scaling), weight_decay %g; "
      "batch %d "
      "x %d step(s) of accumulation over %d rank(s)\n",
      o.name, o.lr, o.weight_decay, c.data.batch_size, o.grad_accum_steps,
      c.resources.nodes * c.resources.gpus);
}

std::string StepsLine(const ExperimentConfig& c) {
  const int epochs = TrainedEpochs(c.schedule);
  const std::optional<int64_t> per_epoch = StepsPerEpoch(c);
  const std::optional<int64_t> images = TrainImages(c);
  if (!per_epoch || !images) {
    return absl::StrCat("  steps: counted by the trainer (the spec does not tell the training images), ",
                        epochs, " epoch(s)\n");
  }
  return absl::StrCat("  steps: ", *per_epoch, " per epoch (", *images, " images), ", *per_epoch * epochs,
                      " in all (", epochs, " epoch(s))\n");
}

std::string ScheduleLine(const ExperimentConfig& c) {
  const ScheduleConfig& s = c.schedule;
  std::string out = absl::StrFormat("  schedule %s: warm-up %g epoch(s) from %g, then to min_lr %g", s.sched,
                                    s.warmup_epochs, s.warmup_lr, s.min_lr);
  if (s.cooldown_epochs > 0) absl::StrAppend(&out, ", then ", s.cooldown_epochs, " cooldown epoch(s)");
  return out + "\n";
}

// "epochs 1-2 dense; epochs 3-10 sparse (1:8)": the N:M engine's timeline, 1-based as the CLI shows epochs.
std::string PhasesLine(const ExperimentConfig& c) {
  if (c.sparsity.sparsity_type == SparsityType::kDense) return "  phases: dense throughout\n";
  if (c.sparsity.IsDynamic()) return "  phases: dynamic sparsity (the layer plan below)\n";
  std::vector<std::string> parts;
  for (const LayerPlanStage& st : RunTimeline(c, c.sparsity.nm)) {
    if (st.end_epoch <= st.start_epoch) continue;
    parts.push_back(
        absl::StrCat("epochs ", st.start_epoch + 1, "-", st.end_epoch, " ", st.phase, " (", st.text, ")"));
  }
  return absl::StrCat("  phases: ", absl::StrJoin(parts, "; "), "\n");
}

std::string DecayLine(const ExperimentConfig& c) {
  const SparsityConfig& s = c.sparsity;
  if (s.sparsity_type == SparsityType::kDense || s.IsDynamic()) return "";
  int64_t sparse_steps = 0;
  const std::optional<double> d = LastStepDecay(c, &sparse_steps);
  if (!d) return "  D at the last step: 0 (a hard mask there)\n";
  return absl::StrFormat(
      "  D at the last step: %.3g (decay_type %s, decay_coef %g, step %d of the sparse phase)\n", *d,
      ToString(s.decay_type), s.decay_coef, sparse_steps);
}

bool AllDigits(const std::string& part) {
  return !part.empty() &&
         std::all_of(part.begin(), part.end(), [](char ch) { return absl::ascii_isdigit(ch); });
}

// A row's name with its first numeric path component as `*`, and that component's value (-1 without one).
std::pair<std::string, int> Pattern(const std::string& name) {
  std::vector<std::string> parts = absl::StrSplit(name, '.');
  for (std::string& part : parts) {
    if (!AllDigits(part) || part.size() > 6) continue;
    const int index = std::stoi(part);
    part = "*";
    return {absl::StrJoin(parts, "."), index};
  }
  return {name, -1};
}

std::string TimelineKey(const LayerPlanRow& row) {
  std::string key = absl::StrCat(static_cast<int>(row.location), row.has_location, "|",
                                 absl::StrJoin(row.shape, ","), "|", row.row_offset, "|");
  for (const LayerPlanStage& st : row.stages)
    absl::StrAppend(&key, st.start_epoch, "-", st.end_epoch, ":", st.text, ";");
  return key;
}

}  // namespace

std::string DescribeTraining(const ExperimentConfig& config) {
  return absl::StrCat(OptimizerLine(config), StepsLine(config), ScheduleLine(config), PhasesLine(config),
                      DecayLine(config));
}

std::string FormatCollapsedLayerPlan(const std::vector<LayerPlanRow>& rows) {
  std::vector<LayerPlanRow> out;
  std::vector<std::vector<int>> indices;  // Per output row: the block indices it stands for.
  std::map<std::string, size_t> at;       // Pattern and timeline -> output row.
  for (const LayerPlanRow& row : rows) {
    const auto [pattern, index] = Pattern(row.name);
    const std::string key = pattern + "|" + TimelineKey(row);
    auto it = at.find(key);
    if (index < 0 || it == at.end()) {
      if (index >= 0) at.emplace(key, out.size());
      out.push_back(row);
      indices.push_back(index < 0 ? std::vector<int>{} : std::vector<int>{index});
      continue;
    }
    indices[it->second].push_back(index);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (indices[i].size() < 2) continue;
    const std::string pattern = Pattern(out[i].name).first;
    std::string ranges = FormatIndexRanges(indices[i]);
    out[i].name = absl::StrCat(absl::StrReplaceAll(pattern, {{"*", "{" + ranges + "}"}}), " (",
                               indices[i].size(), " layers)");
  }
  return FormatLayerPlan(out);
}

}  // namespace nmsparse::cli
