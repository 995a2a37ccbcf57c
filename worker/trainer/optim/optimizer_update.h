// The optimizer's update of a training step, one interface for every optimizer (optimizer.name): AdamW
// (adamw_step.h) and Lion (lion.h). OptimizerStep (optimizer_step.h) calls it once the gradients are
// complete, averaged, unscaled and clipped.
#ifndef NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_UPDATE_H_
#define NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_UPDATE_H_

#include <torch/types.h>

#include <string>

namespace nmsparse {

class OptimizerUpdate {
 public:
  virtual ~OptimizerUpdate() = default;

  // One update of every parameter that has a gradient. `found_inf` (the loss scaler's [1] flag) is given only
  // when skips_on_device(): where it is 1 the update changes nothing, decided on the device.
  virtual void operator()(const torch::Tensor& found_inf) = 0;

  // Whether a step with inf or NaN gradients is skipped on the device (no host read per step); otherwise the
  // caller decides on the host and does not call the update.
  virtual bool skips_on_device() const = 0;

  // Host-side counters brought up to date before a checkpoint is saved (one host read), where the update
  // keeps device-side ones.
  virtual void SyncHostSteps() {}

  // For the trainer's start-up line: "AdamW", "fused AdamW", "Lion".
  virtual std::string Describe() const = 0;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_OPTIM_OPTIMIZER_UPDATE_H_
