// The learning rate of each optimizer update, as timm's scheduler_factory.create_scheduler_v2 builds its
// schedulers from train.py's arguments (schedule.sched: cosine, step, multistep, plateau, constant), and
// nmsparse's own warmup_cosine. The run's length follows the scheduler, as train.py's num_epochs does: a
// cosine schedule trains its cycles, a prefixed warm-up and cooldown_epochs (docs/nmtrain.md).
#ifndef NMSPARSE_WORKER_TRAINER_SCHEDULER_LR_SCHEDULER_H_
#define NMSPARSE_WORKER_TRAINER_SCHEDULER_LR_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "schemas/experiment_config.h"

namespace nmsparse {

class LrScheduler {
 public:
  virtual ~LrScheduler() = default;
  // The rate of optimizer update `update` (0-based over the run), which falls in epoch `epoch`. A scheduler
  // stepped per epoch reads only `epoch`, as train.py's scheduler.step(epoch) does.
  virtual double At(int64_t epoch, int64_t update) const = 0;
  // After epoch `epoch` with the evaluation's top-1 (train.py's scheduler.step(epoch + 1, metric)): plateau's
  // only input; the others are functions of time.
  virtual void EndEpoch(int64_t /*epoch*/, double /*top1*/) {}
  // What a resume needs beyond (epoch, update), for the checkpoint: plateau's best top-1, bad epochs,
  // cooldown counter and current rate; empty for the schedules that are functions of time.
  virtual std::vector<double> State() const { return {}; }
  // Restores State() (a checkpoint's); throws std::invalid_argument on a state of another shape. An empty
  // state (a checkpoint of another schedule, or from before it was recorded) leaves the scheduler as made.
  virtual void LoadState(const std::vector<double>& /*state*/) {}
  // Epochs the run trains: TrainedEpochs(schedule) (schemas/trained_epochs.h).
  virtual int64_t TrainedEpochs() const = 0;
};

// The scheduler of `schedule` for base rate `lr` (optimizer.lr) and `updates_per_epoch` optimizer updates an
// epoch. `schedule` is a validated spec's (ValidateExperiment).
std::unique_ptr<LrScheduler> MakeLrScheduler(const ScheduleConfig& schedule, double lr,
                                             int64_t updates_per_epoch);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_SCHEDULER_LR_SCHEDULER_H_
