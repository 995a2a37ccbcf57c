#include "cli/deploy_warnings.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "schemas/layer_plan.h"
#include "schemas/structure_decay.h"
#include "schemas/train_steps.h"
#include "schemas/trained_epochs.h"
#include "worker/sparsity/decay.h"

namespace nmsparse::cli {
namespace {

void AddDecayWarning(const ExperimentConfig& config, std::vector<std::string>* out) {
  int64_t sparse_steps = 0;
  const std::optional<double> d = LastStepDecay(config, &sparse_steps);
  if (!d || *d <= kDeployDecayTolerance) return;
  const SparsityConfig& s = config.sparsity;
  out->push_back(absl::StrFormat(
      "sparsity.decay_coef: %g (decay_type %s) leaves D = %.3g at the last of the %d steps of the sparse "
      "phase: the trained model still passes %.3g%% of every pruned weight, so the deployable model "
      "(every sparse layer hard-masked at its target N:M: deploy_top1, nmtrain --export) differs from it; a "
      "larger sparsity.decay_coef or a fine-tune phase (sparsity.fine_tune_steps) ends at D = 0",
      s.decay_coef, ToString(s.decay_type), *d, sparse_steps, 100.0 * *d));
}

void AddFineTuneWarnings(const ExperimentConfig& config, std::vector<std::string>* out) {
  const SparsityConfig& s = config.sparsity;
  const int span = SparsityEpochs(config.schedule);
  if (s.phases.empty()) {
    if (s.fine_tune_fraction > 0 && FineTuneEpochs(s, span) == 0) {
      out->push_back(absl::StrFormat(
          "sparsity.fine_tune_steps: %g of the %d epochs the phases divide (schedule.epochs) rounds to 0 "
          "fine-tune epochs: the run never fine-tunes with hard masks; fine_tune_steps >= %g gives one",
          s.fine_tune_fraction, span, 1.0 / span));
    }
    return;
  }
  const auto epochs = PhaseEpochs(s, span, TrainedEpochs(config.schedule));
  for (size_t i = 0; i < s.phases.size(); ++i) {
    if (s.phases[i].kind != PhaseKind::kFineTune || epochs[i].second > epochs[i].first) continue;
    out->push_back(absl::StrFormat(
        "sparsity.phases[%d]: fine_tune fraction %g of the %d epochs the phases divide (schedule.epochs) "
        "rounds to 0 epochs: the run never fine-tunes with hard masks there",
        static_cast<int>(i), s.phases[i].fraction, span));
  }
}

}  // namespace

std::optional<double> LastStepDecay(const ExperimentConfig& config, int64_t* sparse_steps) {
  const SparsityConfig& s = config.sparsity;
  if (s.sparsity_type == SparsityType::kSrste || s.decay_type == DecayType::kStep) return std::nullopt;
  const std::vector<LayerPlanStage> stages = RunTimeline(config, s.nm);
  if (stages.empty() || stages.back().phase != "sparse") return std::nullopt;
  const std::optional<int64_t> steps_per_epoch = StepsPerEpoch(config);
  if (!steps_per_epoch) return std::nullopt;
  // j counts from the first step of the sparse run the last step belongs to (phase_schedule.h).
  size_t first = stages.size() - 1;
  while (first > 0 && stages[first - 1].phase != "dense") --first;
  *sparse_steps = (stages.back().end_epoch - stages[first].start_epoch) * *steps_per_epoch;
  return DecayValue(s.decay_type, s.decay_coef, static_cast<double>(*sparse_steps - 1));
}

std::vector<std::string> DeployWarnings(const ExperimentConfig& config) {
  std::vector<std::string> out;
  if (config.sparsity.sparsity_type == SparsityType::kDense || config.sparsity.IsDynamic()) return out;
  AddDecayWarning(config, &out);
  AddFineTuneWarnings(config, &out);
  return out;
}

}  // namespace nmsparse::cli
