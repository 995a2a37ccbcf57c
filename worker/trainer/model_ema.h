// timm's ModelEmaV2, the weight average the reference's train.py keeps with --model-ema: a copy of the
// model's parameters taken at the start, moved after every optimizer step by
//
//   ema = decay * ema + (1 - decay) * weight
//
// with the same float32 roundings as timm's expression (tools/timm_ema_golden.py). It averages the DENSE
// weights (the sparsity engine keeps dense weights and applies masks in the forward pass); evaluating the EMA
// puts its weights into the model for the evaluation, so that the forward pass applies the run's current
// mask rule to them. Buffers are not averaged: timm's V2 averages them too, but nmsparse's models have only
// constant buffers (positions, masks), for which the average is the buffer itself. Updates are two foreach
// kernels on the device, with no host read. In a multi-rank run every rank's weights are equal after the
// averaged step, so every rank's EMA is too.
#ifndef NMSPARSE_WORKER_TRAINER_MODEL_EMA_H_
#define NMSPARSE_WORKER_TRAINER_MODEL_EMA_H_

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "worker/sparsity/sparsity_method.h"  // NamedTensors

namespace nmsparse {

class ModelEma {
 public:
  // Starts as a copy of `model`'s parameters (which must outlive this).
  ModelEma(torch::nn::Module& model, double decay);

  // After each optimizer step.
  void Update();

  // Runs `evaluate` with the EMA in the model's parameters, and puts the trained weights back.
  void WithEmaWeights(const std::function<void()>& evaluate);

  // The EMA by parameter name, for the checkpoint; Load takes it back (an empty state: a checkpoint written
  // without EMA, from which the EMA restarts as a copy of the loaded weights, as timm's load_checkpoint
  // does).
  NamedTensors StateDict() const;
  absl::Status Load(const NamedTensors& state);

  double decay() const { return decay_; }

 private:
  void CopyFromModel();

  const double decay_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;  // The model's.
  std::vector<torch::Tensor> ema_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_MODEL_EMA_H_
