#include "worker/trainer/evaluator.h"

#include <torch/torch.h>

#include <algorithm>

#include "worker/trainer/autocast_guard.h"

namespace nmsparse {

EvalResult Evaluate(ClassifierImpl& model, const Dataset& data, const Normalization& norm, int64_t batch_size,
                    Distributed& dist, torch::Device device, bool bf16) {
  torch::NoGradGuard no_grad;
  model.eval();
  const int world = dist.world_size();
  const int64_t local_batch = std::max<int64_t>(1, batch_size / world);
  double loss_sum = 0.0, top1 = 0.0, top5 = 0.0, count = 0.0;
  std::vector<int64_t> indices;
  auto run = [&] {
    auto batch = LoadBatch(data, indices, norm);
    batch.labels = batch.labels.to(device);
    auto logits = ForwardLogits(model, batch.images.to(device), bf16);
    loss_sum +=
        torch::nn::functional::cross_entropy(
            logits, batch.labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    const int64_t k = std::min<int64_t>(5, logits.size(1));
    auto topk = std::get<1>(logits.topk(k, 1));
    auto hits = topk.eq(batch.labels.unsqueeze(1));
    top1 += hits.select(1, 0).sum().item<double>();
    top5 += hits.any(1).sum().item<double>();
    count += static_cast<double>(indices.size());
    indices.clear();
  };
  for (int64_t i = dist.rank(); i < data.size(); i += world) {
    indices.push_back(i);
    if (static_cast<int64_t>(indices.size()) == local_batch) run();
  }
  if (!indices.empty()) run();
  model.train();
  const auto sums = dist.SumAcrossRanks({loss_sum, top1, top5, count});
  EvalResult result;
  result.images = static_cast<int64_t>(sums[3]);
  if (sums[3] > 0) {
    result.loss = sums[0] / sums[3];
    result.top1 = sums[1] / sums[3];
    result.top5 = sums[2] / sums[3];
  }
  return result;
}

}  // namespace nmsparse
