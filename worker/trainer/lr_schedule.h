// Learning rate per optimizer step: linear warm-up from warmup_lr to lr over `warmup_steps`, then cosine
// decay to min_lr at `total_steps` (timm's CosineLRScheduler with t_in_epochs=False and warmup_prefix=True,
// so the rate is continuous at the end of the warm-up).
#ifndef NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_
#define NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_

#include <cstdint>

namespace nmsparse {

// The schedule's rates and lengths (timm's CosineLRScheduler: lr is the optimizer's base rate, warmup_lr its
// warmup_lr_init, min_lr its lr_min). Set by name: this library is plain C++, without LibTorch's TORCH_ARG.
struct LrScheduleOptions {
  double lr = 0.0;
  double warmup_lr = 0.0;
  double min_lr = 0.0;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
};

class LrSchedule {
 public:
  explicit LrSchedule(const LrScheduleOptions& options);
  double At(int64_t step) const;  // `step`: 0-based optimizer step.

 private:
  double lr_, warmup_lr_, min_lr_;
  int64_t warmup_steps_, total_steps_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LR_SCHEDULE_H_
