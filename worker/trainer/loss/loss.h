// Classification losses as timm defines them (timm/loss/cross_entropy.py, binary_cross_entropy.py), and the
// choice between them that timm's train.py makes from the recipe (TrainLoss).
#ifndef NMSPARSE_WORKER_TRAINER_LOSS_LOSS_H_
#define NMSPARSE_WORKER_TRAINER_LOSS_LOSS_H_

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse {

// Smoothed one-hot targets: 1 - s + s/K on the label, s/K elsewhere; on the labels' device.
torch::Tensor SmoothedTargets(const torch::Tensor& labels, int64_t num_classes, double smoothing);

// Mean over the batch of -sum(targets * log_softmax(logits)).
torch::Tensor SoftTargetCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets);

// Mean over the batch of (1 - s) * -log p[label] + s * mean_k(-log p[k]).
torch::Tensor LabelSmoothingCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                         double smoothing);

// timm's BinaryCrossEntropy (no class weights). Integer labels [B] become smoothed one-hot targets; dense
// targets [B, K] (mixed upstream) are used as they are. With a threshold, targets become target > threshold.
struct BceOptions {
  double smoothing = 0.1;  // timm's default; applies to integer labels only.
  std::optional<double> target_threshold;
  bool sum_classes = false;  // Sum over the classes, then the batch mean; else the mean over all elements.
};
torch::Tensor BinaryCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                 const BceOptions& options);

// The training loss timm's train.py picks: with Mixup/CutMix active, BCE (unsmoothed: smoothing is in the
// mixed targets) or soft-target cross-entropy; else with label smoothing, BCE (smoothed) or label-smoothing
// cross-entropy; else plain cross-entropy (bce_loss is then unused, as in train.py).
class TrainLoss {
 public:
  enum class Kind { kCrossEntropy, kLabelSmoothing, kSoftTarget, kBinaryCrossEntropy };

  explicit TrainLoss(const OptimizerConfig& optimizer);

  Kind kind() const { return kind_; }
  std::string Describe() const;
  // Whether the loss takes Mixup's dense targets rather than integer labels.
  bool dense_targets() const { return dense_; }
  // `targets`: dense [B, K] when dense_targets(), else the integer labels [B].
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& targets) const;

 private:
  Kind kind_ = Kind::kCrossEntropy;
  bool dense_ = false;
  double smoothing_ = 0.0;
  BceOptions bce_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_LOSS_LOSS_H_
