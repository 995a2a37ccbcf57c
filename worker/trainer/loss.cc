#include "worker/trainer/loss.h"

#include <torch/torch.h>

#include <random>

namespace nmsparse {

torch::Tensor SmoothedTargets(const torch::Tensor& labels, int64_t num_classes, double smoothing) {
  const double off = smoothing / static_cast<double>(num_classes);
  auto targets = torch::full({labels.size(0), num_classes}, off, labels.options().dtype(torch::kFloat32));
  return targets.scatter_(1, labels.unsqueeze(1), 1.0 - smoothing + off);
}

torch::Tensor SoftTargetCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return (-targets * torch::log_softmax(logits, -1)).sum(-1).mean();
}

double Mixup(torch::Tensor& images, torch::Tensor& targets, double alpha, uint64_t key) {
  if (alpha <= 0.0) return 1.0;
  std::mt19937_64 rng(key);
  std::gamma_distribution<double> gamma(alpha, 1.0);
  const double x = gamma(rng), y = gamma(rng);
  const double lambda = x / (x + y);
  images = images * lambda + images.flip({0}) * (1.0 - lambda);
  targets = targets * lambda + targets.flip({0}) * (1.0 - lambda);
  return lambda;
}

}  // namespace nmsparse
