#include "worker/trainer/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace nmsparse {

LrSchedule::LrSchedule(const LrScheduleOptions& options)
    : lr_(options.lr),
      warmup_lr_(options.warmup_lr),
      min_lr_(options.min_lr),
      warmup_steps_(std::max<int64_t>(options.warmup_steps, 0)),
      total_steps_(std::max<int64_t>(options.total_steps, 1)) {}

double LrSchedule::At(int64_t step) const {
  if (step < warmup_steps_) {
    return warmup_lr_ + (lr_ - warmup_lr_) * static_cast<double>(step) / static_cast<double>(warmup_steps_);
  }
  const int64_t decay_steps = std::max<int64_t>(total_steps_ - warmup_steps_, 1);
  const double t =
      std::min(1.0, static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps));
  return min_lr_ + 0.5 * (lr_ - min_lr_) * (1.0 + std::cos(M_PI * t));
}

}  // namespace nmsparse
