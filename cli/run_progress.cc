#include "cli/run_progress.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "cli/run_format.h"
#include "cli/table_printer.h"
#include "common/metric_text.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "schemas/experiment_config.h"
#include "schemas/train_steps.h"
#include "schemas/trained_epochs.h"

namespace nmsparse::cli {

RunProgress::RunProgress(std::optional<int64_t> steps_per_epoch, int epochs)
    : steps_per_epoch_(steps_per_epoch), epochs_(std::max(epochs, 0)) {}

RunProgress RunProgress::ForSpec(const std::string& resolved_spec) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(resolved_spec, "run spec");
  if (!config.ok()) return RunProgress(std::nullopt, 0);
  return RunProgress(StepsPerEpoch(*config), TrainedEpochs(config->schedule));
}

void RunProgress::Add(const v1::MetricPoint& point) {
  if (point.attempt() > attempt_) {  // A new attempt (a retry resumes from a checkpoint): a new window.
    attempt_ = point.attempt();
    first_step_ = -1;
  }
  if (point.attempt() < attempt_) return;
  const auto step = static_cast<int64_t>(point.step());
  if (point.kind() == contract::kKindEpoch && !steps_per_epoch_.has_value() && point.epoch() == 0 &&
      step > 0) {
    steps_per_epoch_ = step;  // Epoch points carry the steps done so far.
  }
  if (point.kind() == contract::kKindFinal) finished_ = true;
  steps_done_ = std::max(steps_done_, step);
  if (first_step_ < 0) {
    first_step_ = step;
    first_ms_ = point.at_ms();
  }
  last_ms_ = std::max(last_ms_, point.at_ms());
  auto images = point.values().find(contract::kImagesPerSecond);
  if (images != point.values().end() && std::isfinite(images->second)) images_per_s_ = images->second;
}

std::optional<int64_t> RunProgress::total_steps() const {
  if (!steps_per_epoch_.has_value() || *steps_per_epoch_ <= 0 || epochs_ == 0) return std::nullopt;
  return *steps_per_epoch_ * epochs_;
}

std::optional<double> RunProgress::steps_per_s() const {
  if (first_step_ < 0 || steps_done_ <= first_step_ || last_ms_ <= first_ms_) return std::nullopt;
  return static_cast<double>(steps_done_ - first_step_) * 1000.0 / static_cast<double>(last_ms_ - first_ms_);
}

std::optional<double> RunProgress::eta_s() const {
  if (finished_) return 0.0;
  const std::optional<int64_t> total = total_steps();
  const std::optional<double> rate = steps_per_s();
  if (!total.has_value() || !rate.has_value() || *rate <= 0) return std::nullopt;
  return static_cast<double>(std::max<int64_t>(*total - steps_done_, 0)) / *rate;
}

std::string RunProgress::Text() const {
  std::string text = absl::StrCat("step ", steps_done_);
  if (const auto total = total_steps()) {
    absl::StrAppend(
        &text, "/", *total, " (",
        static_cast<int>(100.0 * std::min<double>(steps_done_, *total) / std::max<int64_t>(*total, 1)), "%)");
  }
  if (const auto rate = steps_per_s()) absl::StrAppend(&text, "  ", FormatMetric(*rate), " steps/s");
  if (images_per_s_.has_value()) absl::StrAppend(&text, "  ", FormatMetric(*images_per_s_), " img/s");
  if (finished_) {
    absl::StrAppend(&text, "  done");
  } else if (const auto eta = eta_s()) {
    absl::StrAppend(&text, "  ETA ", FormatSeconds(*eta));
  }
  return text;
}

}  // namespace nmsparse::cli
