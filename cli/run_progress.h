// One run's progress as `watch` and `follow` show it: optimizer steps done of the run's total, throughput and
// an ETA, from the run's metric points. The total is steps per epoch x the epochs the run trains
// (TrainedEpochs): steps per epoch from the spec where it tells (schemas/train_steps.h), else from the first
// epoch point (its step count). Rates use the points' coordinator times (at_ms), so a replayed history gives
// the same figures as a live one.
#ifndef NMSPARSE_CLI_RUN_PROGRESS_H_
#define NMSPARSE_CLI_RUN_PROGRESS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

class RunProgress {
 public:
  // `steps_per_epoch`: nullopt when the spec does not tell (shards).
  RunProgress(std::optional<int64_t> steps_per_epoch, int epochs);
  // From a run's spec, its canonical YAML (v1.Run.resolved_spec); a spec that does not parse (a run listed
  // without it) gives no step total until its first epoch point.
  static RunProgress ForSpec(const std::string& resolved_spec);

  // Takes a metric point (step, epoch or final). Points of a later attempt restart the rate's window.
  void Add(const v1::MetricPoint& point);

  int64_t steps_done() const { return steps_done_; }
  std::optional<int64_t> total_steps() const;
  std::optional<double> steps_per_s() const;
  std::optional<double> eta_s() const;  // Remaining steps at the current rate.
  std::optional<double> images_per_s() const { return images_per_s_; }
  bool finished() const { return finished_; }
  int epochs() const { return epochs_; }  // The epochs the run trains (0: unknown).

  // "step 120/468 (25%)  45.2 steps/s  1.5k img/s  ETA 8s" (parts that are not known yet left out).
  std::string Text() const;

 private:
  std::optional<int64_t> steps_per_epoch_;
  int epochs_;
  uint32_t attempt_ = 0;
  int64_t steps_done_ = 0;
  // The window the rate is measured over: the first and latest point of the current attempt.
  int64_t first_step_ = -1, first_ms_ = 0, last_ms_ = 0;
  std::optional<double> images_per_s_;
  bool finished_ = false;
};

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_RUN_PROGRESS_H_
