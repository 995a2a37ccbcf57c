#include "worker/trainer/loss/loss.h"

#include <torch/torch.h>

namespace nmsparse {

torch::Tensor SmoothedTargets(const torch::Tensor& labels, int64_t num_classes, double smoothing) {
  const double off = smoothing / static_cast<double>(num_classes);
  auto targets = torch::full({labels.size(0), num_classes}, off, labels.options().dtype(torch::kFloat32));
  return targets.scatter_(1, labels.view({-1, 1}), 1.0 - smoothing + off);
}

torch::Tensor SoftTargetCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return (-targets * torch::log_softmax(logits, -1)).sum(-1).mean();
}

torch::Tensor LabelSmoothingCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                         double smoothing) {
  const auto logprobs = torch::log_softmax(logits, -1);
  const auto nll = -logprobs.gather(-1, labels.unsqueeze(1)).squeeze(1);
  const auto smooth = -logprobs.mean(-1);
  return ((1.0 - smoothing) * nll + smoothing * smooth).mean();
}

torch::Tensor BinaryCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                 const BceOptions& options) {
  torch::Tensor t = targets;
  if (targets.sizes() != logits.sizes()) {
    const double off = options.smoothing / static_cast<double>(logits.size(-1));
    t = torch::full(logits.sizes(), off, logits.options())
            .scatter_(1, targets.to(torch::kLong).view({-1, 1}), 1.0 - options.smoothing + off);
  }
  if (options.target_threshold) t = t.gt(*options.target_threshold).to(t.scalar_type());
  if (options.sum_classes) {
    return torch::binary_cross_entropy_with_logits(logits, t, {}, {}, at::Reduction::None).sum(-1).mean();
  }
  return torch::binary_cross_entropy_with_logits(logits, t);
}

TrainLoss::TrainLoss(const OptimizerConfig& o) : smoothing_(o.label_smoothing) {
  if (o.bce_target_thresh > 0.0) bce_.target_threshold = o.bce_target_thresh;
  bce_.sum_classes = o.bce_sum;
  if (o.MixupActive()) {
    dense_ = true;
    kind_ = o.bce_loss ? Kind::kBinaryCrossEntropy : Kind::kSoftTarget;
  } else if (o.label_smoothing > 0.0) {
    bce_.smoothing = o.label_smoothing;
    kind_ = o.bce_loss ? Kind::kBinaryCrossEntropy : Kind::kLabelSmoothing;
  }
}

std::string TrainLoss::Describe() const {
  switch (kind_) {
    case Kind::kCrossEntropy:
      return "cross-entropy";
    case Kind::kLabelSmoothing:
      return "label-smoothing cross-entropy";
    case Kind::kSoftTarget:
      return "soft-target cross-entropy";
    case Kind::kBinaryCrossEntropy:
      return "binary cross-entropy";
  }
  return "";
}

torch::Tensor TrainLoss::operator()(const torch::Tensor& logits, const torch::Tensor& targets) const {
  switch (kind_) {
    case Kind::kCrossEntropy:
      return torch::cross_entropy_loss(logits, targets);
    case Kind::kLabelSmoothing:
      return LabelSmoothingCrossEntropy(logits, targets, smoothing_);
    case Kind::kSoftTarget:
      return SoftTargetCrossEntropy(logits, targets);
    case Kind::kBinaryCrossEntropy:
      return BinaryCrossEntropy(logits, targets, bce_);
  }
  return {};
}

}  // namespace nmsparse
