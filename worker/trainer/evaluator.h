// Top-1 / top-5 accuracy and cross-entropy of a model on an evaluation set. With several ranks each rank
// evaluates the images rank, rank + world, ... and the counts are summed, so every rank gets the same result.
#ifndef NMSPARSE_WORKER_TRAINER_EVALUATOR_H_
#define NMSPARSE_WORKER_TRAINER_EVALUATOR_H_

#include <cstdint>

#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/dataset.h"
#include "worker/trainer/distributed.h"
#include "worker/trainer/models/classifier.h"

namespace nmsparse {

struct EvalResult {
  double loss = 0.0;  // Mean cross-entropy (no label smoothing).
  double top1 = 0.0;  // Fractions in [0, 1].
  double top5 = 0.0;  // Top-min(5, classes).
  int64_t images = 0;
};

// Puts the model in eval mode and back in train mode afterwards. `bf16`: forward passes under bf16 autocast
// (the run's precision), the loss and accuracies from fp32 logits.
EvalResult Evaluate(ClassifierImpl& model, const Dataset& data, const Normalization& norm, int64_t batch_size,
                    Distributed& dist, torch::Device device = torch::kCPU, bool bf16 = false);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_EVALUATOR_H_
