// Classification loss with label smoothing and optional mixup (timm's SoftTargetCrossEntropy over mixed,
// smoothed one-hot targets; without mixup the same as LabelSmoothingCrossEntropy).
#ifndef NMSPARSE_WORKER_TRAINER_LOSS_H_
#define NMSPARSE_WORKER_TRAINER_LOSS_H_

#include <torch/types.h>

#include <cstdint>

namespace nmsparse {

// Smoothed one-hot targets: 1 - s + s/K on the label, s/K elsewhere; on the labels' device.
torch::Tensor SmoothedTargets(const torch::Tensor& labels, int64_t num_classes, double smoothing);

// Mean over the batch of -sum(targets * log_softmax(logits)).
torch::Tensor SoftTargetCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets);

// Mixup as timm does it per batch: lambda ~ Beta(alpha, alpha) drawn from `key`, images mixed with the
// batch in reverse order, targets likewise. Returns lambda (1 when alpha <= 0: nothing mixed).
double Mixup(torch::Tensor& images, torch::Tensor& targets, double alpha, uint64_t key);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LOSS_H_
