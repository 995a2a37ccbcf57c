// Learning rate per optimizer step: linear warm-up from warmup_lr to lr over `warmup_steps`, then cosine
// decay to min_lr at `total_steps` (timm's CosineLRScheduler with t_in_epochs=False and warmup_prefix=True,
// so the rate is continuous at the end of the warm-up).
#ifndef NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_
#define NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_

#include <cstdint>

namespace nmsparse {

class LrSchedule {
 public:
  LrSchedule(double lr, double warmup_lr, double min_lr, int64_t warmup_steps, int64_t total_steps);
  double At(int64_t step) const;  // `step`: 0-based optimizer step.

 private:
  double lr_, warmup_lr_, min_lr_;
  int64_t warmup_steps_, total_steps_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_
