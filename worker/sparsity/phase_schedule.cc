#include "worker/sparsity/phase_schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "schemas/structure_decay.h"

namespace nmsparse {
namespace {

bool IsSparseKind(PhaseKind kind) { return kind != PhaseKind::kDense; }

// Appends [begin, end) unless empty, merging with a preceding segment of the same kind.
void Append(std::vector<PhaseSegment>& segments, PhaseKind kind, int begin, int end) {
  if (end <= begin) return;
  if (!segments.empty() && segments.back().kind == kind && segments.back().end_epoch == begin) {
    segments.back().end_epoch = end;
    return;
  }
  segments.push_back(PhaseSegment{kind, begin, end});
}

absl::StatusOr<std::vector<PhaseSegment>> FromPhaseList(const std::vector<PhaseSpec>& phases, int total) {
  double sum = 0;
  for (size_t k = 0; k < phases.size(); ++k) {
    if (!(phases[k].fraction > 0.0) || phases[k].fraction > 1.0) {
      return absl::InvalidArgumentError(
          absl::StrCat("phases[", k, "]: fraction ", phases[k].fraction, " is out of range (0, 1]"));
    }
    sum += phases[k].fraction;
  }
  if (std::fabs(sum - 1.0) > 1e-6) {
    return absl::InvalidArgumentError(absl::StrCat("phases: fractions sum to ", sum, ", must sum to 1"));
  }
  std::vector<PhaseSegment> segments;
  double cumulative = 0;
  int begin = 0;
  for (size_t k = 0; k < phases.size(); ++k) {
    cumulative += phases[k].fraction;
    const int end = k + 1 == phases.size() ? total : static_cast<int>(std::floor(cumulative * total + 1e-9));
    Append(segments, phases[k].kind, begin, std::min(end, total));
    begin = std::max(begin, std::min(end, total));
  }
  return segments;
}

}  // namespace

absl::StatusOr<PhaseSchedule> PhaseSchedule::Create(const SparsityConfig& config, int total_epochs,
                                                    int span_epochs) {
  const int span = span_epochs > 0 ? span_epochs : total_epochs;
  if (total_epochs < 1 || span > total_epochs) {
    return absl::InvalidArgumentError(
        absl::StrCat("total epochs ", total_epochs, " must be >= 1 and >= the schedule's ", span));
  }
  PhaseSchedule schedule;
  schedule.total_epochs_ = total_epochs;
  schedule.span_epochs_ = span;
  if (!config.phases.empty()) {
    auto segments = FromPhaseList(config.phases, span);
    if (!segments.ok()) return segments.status();
    schedule.segments_ = *std::move(segments);
    schedule.segments_.back().end_epoch = total_epochs;  // The last phase continues through the cooldown.
    return schedule;
  }
  for (auto [key, value] : {std::pair{"dense_steps", config.dense_fraction},
                            std::pair{"fine_tune_steps", config.fine_tune_fraction}}) {
    if (!(value >= 0.0 && value <= 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", value, " is out of range [0, 1]"));
    }
  }
  const int d = DenseEpochs(config, span);
  const int f = FineTuneEpochs(config, span);
  schedule.dense_epochs_ = d;
  schedule.fine_tune_epochs_ = f;
  // Fine-tune epochs are those > T - f, i.e. from T - f + 1 on (f = 1 gives none inside [0, T); f = 0 gives
  // the epochs after T, when the run trains any).
  const int fine_begin = std::max(d, span - f + 1);
  Append(schedule.segments_, PhaseKind::kDense, 0, std::min(d, total_epochs));
  Append(schedule.segments_, PhaseKind::kSparse, d, std::min(fine_begin, total_epochs));
  Append(schedule.segments_, PhaseKind::kFineTune, fine_begin, total_epochs);
  return schedule;
}

PhaseState PhaseSchedule::At(int epoch, int64_t global_step, int64_t steps_per_epoch) const {
  PhaseState state;
  if (segments_.empty()) return state;
  epoch = std::clamp(epoch, 0, total_epochs_ - 1);
  int k = 0;
  while (k + 1 < static_cast<int>(segments_.size()) && epoch >= segments_[k].end_epoch) ++k;
  state.segment = k;
  state.kind = segments_[k].kind;
  if (!IsSparseKind(state.kind)) return state;
  int run_start = k;
  while (run_start > 0 && IsSparseKind(segments_[run_start - 1].kind)) --run_start;
  const int64_t first_step = static_cast<int64_t>(segments_[run_start].begin_epoch) * steps_per_epoch;
  state.sparse_step = std::max<int64_t>(0, global_step - first_step);
  return state;
}

std::string PhaseName(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kDense:
      return "dense";
    case PhaseKind::kSparse:
      return "sparse";
    case PhaseKind::kFineTune:
      return "fine_tune";
  }
  return "?";
}

}  // namespace nmsparse
