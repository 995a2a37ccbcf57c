// Dynamic loss scaling for fp16 training, with torch.amp.GradScaler's semantics (docs/nmtrain.md,
// "Precision"): the loss is multiplied by a scale before backward so that small fp16 gradients do not
// underflow; the gradients are unscaled (before clipping) while a device flag records whether any is inf or
// NaN; the caller then skips the step on that flag, and Update() backs the scale off (x0.5) on it or grows it
// (x2) after `growth_interval` consecutive clean steps. Scale, growth tracker and flag stay on the device:
// nothing here reads a device value on the host.
#ifndef NMSPARSE_WORKER_TRAINER_PRECISION_LOSS_SCALER_H_
#define NMSPARSE_WORKER_TRAINER_PRECISION_LOSS_SCALER_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace nmsparse {

// GradScaler's defaults.
struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  LossScaler(const LossScalerOptions& options, torch::Device device);

  // loss * scale (the scale as a float32 device tensor, as GradScaler.scale does).
  torch::Tensor Scale(const torch::Tensor& loss) const;

  // Divides every defined gradient by the scale in place and sets the found-inf flag when any is inf or NaN
  // (the flag is reset first: one call per step, after the gradients are complete and averaged).
  void Unscale(const std::vector<torch::Tensor>& params);

  // After the step (taken or skipped): backoff on the flag, else count a clean step and grow every
  // growth_interval of them.
  void Update();

  // [1] float32 on the device: 1 when the last Unscale found an inf or NaN gradient, else 0.
  const torch::Tensor& found_inf() const { return found_inf_; }
  // [1] float32: the current scale; its inverse is what SR-STE's reference mode divides its term by.
  const torch::Tensor& scale() const { return scale_; }
  // [1] int32: consecutive clean steps since the last growth or backoff.
  const torch::Tensor& growth_tracker() const { return growth_tracker_; }

  // [1] float32: steps skipped so far (found_inf summed by Update), for the metric lines.
  const torch::Tensor& skipped_steps() const { return skipped_steps_; }

  // Checkpoints: scale, growth tracker and skipped steps as one [3] float64 CPU tensor (exact: the scale is
  // a float32, the others integers below 2^53), and back onto this scaler's device. Load throws
  // std::invalid_argument on another shape.
  torch::Tensor State() const;
  void Load(const torch::Tensor& state);

 private:
  LossScalerOptions options_;
  torch::Tensor scale_;
  torch::Tensor growth_tracker_;
  torch::Tensor found_inf_;
  torch::Tensor skipped_steps_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_PRECISION_LOSS_SCALER_H_
