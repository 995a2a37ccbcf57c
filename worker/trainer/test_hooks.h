// What a test may ask of a run beyond its spec, in one place (docs/testing.md): a callback after every
// optimizer step, a hold point at which the run waits while a file exists, and fp16's loss scaling in a run
// of another precision. A production run leaves all of them at their defaults, and then none costs anything.
#ifndef NMSPARSE_WORKER_TRAINER_TEST_HOOKS_H_
#define NMSPARSE_WORKER_TRAINER_TEST_HOOKS_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "absl/status/status.h"

namespace nmsparse {

struct TrainerTestHooks {
  std::function<void(int64_t global_step)> on_step_end;  // Called after every optimizer step.
  // The chaos suite's hold point: once this many epochs are done (their lines printed, the checkpoint
  // written), or this many optimizer steps (mid-epoch, after the step's lines), wait while `hold_file` exists
  // or until stopped. Empty: no hold, and no file is looked at; 0: not at that kind of point.
  std::string hold_file;
  int hold_after_epochs = 0;
  int64_t hold_after_steps = 0;
  // fp16's loss scaling in a run of another precision (fp16 autocast needs a GPU or LibTorch 2.4+), and a
  // growth interval for the scaler (0: GradScaler's 2000).
  bool loss_scaling = false;
  int64_t loss_scale_growth_interval = 0;
};

// The hold point from $NMTRAIN_HOLD_FILE with $NMTRAIN_HOLD_AFTER_EPOCHS or $NMTRAIN_HOLD_AFTER_STEPS (how
// the chaos suite holds a real nmtrain started by nmworker). Unset: nothing changes. InvalidArgument when the
// file is set without a count >= 1.
absl::Status ReadHoldFromEnvironment(TrainerTestHooks* hooks);

// Waits at the hold point when the run reaches it: a stat every 50 ms while held, none otherwise. A stop
// (`stop_wanted`) ends the hold; the run's next step then stops it as usual.
class HoldPoint {
 public:
  HoldPoint(const TrainerTestHooks& hooks, std::function<bool()> stop_wanted,
            std::function<std::ostream&()> log);
  void AfterEpochs(int epochs_done) const;
  void AfterSteps(int64_t global_step) const;

 private:
  void Hold(const std::string& after) const;

  const TrainerTestHooks& hooks_;
  std::function<bool()> stop_wanted_;
  std::function<std::ostream&()> log_;  // The run's log with its rank prefix.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_TEST_HOOKS_H_
