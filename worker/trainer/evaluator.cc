#include "worker/trainer/evaluator.h"

#include <torch/torch.h>

#include <algorithm>

#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/host_reads.h"

namespace nmsparse {

EvalResult Evaluate(ClassifierImpl& model, const Dataset& data, const Normalization& norm, int64_t batch_size,
                    Distributed& dist, torch::Device device, bool bf16) {
  torch::NoGradGuard no_grad;
  model.eval();
  const int world = dist.world_size();
  const int64_t local_batch = std::max<int64_t>(1, batch_size / world);
  const DeviceTransfer transfer(norm, device);
  // Loss and hit counts accumulate on the device and are read once at the end (ReadToHost).
  auto totals = torch::zeros({3}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  double count = 0.0;
  std::vector<int64_t> indices;
  auto run = [&] {
    const Batch batch = transfer(LoadHostBatch(data, indices, AugmentOptions{}, 0, device.is_cuda()));
    auto logits = ForwardLogits(model, batch.images, bf16);
    auto loss = torch::nn::functional::cross_entropy(
        logits, batch.labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    const int64_t k = std::min<int64_t>(5, logits.size(1));
    auto topk = std::get<1>(logits.topk(k, 1));
    auto hits = topk.eq(batch.labels.unsqueeze(1));
    totals.add_(torch::stack({loss.to(torch::kDouble), hits.select(1, 0).sum().to(torch::kDouble),
                              hits.any(1).sum().to(torch::kDouble)}));
    count += static_cast<double>(indices.size());
    indices.clear();
  };
  for (int64_t i = dist.rank(); i < data.size(); i += world) {
    indices.push_back(i);
    if (static_cast<int64_t>(indices.size()) == local_batch) run();
  }
  if (!indices.empty()) run();
  const std::vector<double> local = ReadToHost(totals);
  const double loss_sum = local[0], top1 = local[1], top5 = local[2];
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
