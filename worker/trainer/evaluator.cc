#include "worker/trainer/evaluator.h"

#include <torch/torch.h>

#include <algorithm>

#include "worker/trainer/data/prefetch_loader.h"
#include "worker/trainer/device/device_setup.h"
#include "worker/trainer/device/host_reads.h"
#include "worker/trainer/precision/autocast_guard.h"

namespace nmsparse {

EvalSplit::EvalSplit(int64_t size, int64_t batch_size, int rank, int world)
    : rank_(rank),
      world_(world),
      images_(size > rank ? (size - rank + world - 1) / world : 0),
      batch_(std::max<int64_t>(1, batch_size / world)) {}

std::vector<int64_t> EvalSplit::Indices(int64_t b) const {
  std::vector<int64_t> indices;
  for (int64_t j = b * batch_; j < std::min(images_, (b + 1) * batch_); ++j)
    indices.push_back(rank_ + j * world_);
  return indices;
}

std::set<int64_t> EvalSplit::BatchSizes() const {
  std::set<int64_t> sizes;
  if (images_ >= batch_) sizes.insert(batch_);
  if (images_ % batch_ != 0) sizes.insert(images_ % batch_);
  return sizes;
}

EvalResult Evaluate(ClassifierImpl& model, const Dataset& data, const Normalization& norm, int64_t batch_size,
                    Distributed& dist, torch::Device device, c10::ScalarType autocast_dtype,
                    int loader_threads, int epoch) {
  torch::NoGradGuard no_grad;
  model.eval();
  const EvalSplit split(data.size(), batch_size, dist.rank(), dist.world_size());
  const bool pin = device.is_cuda();
  PrefetchLoader batches(
      [&](int64_t b) {
        thread_local const bool bound = (UseDeviceOnThisThread(device), true);  // Once per loader thread.
        (void)bound;
        return LoadHostBatch(data, split.Indices(b), AugmentOptions{}, 0, pin, nullptr, epoch);
      },
      0, split.batches(), loader_threads, std::max(2, 2 * loader_threads));
  const DeviceTransfer transfer(norm, device);
  // Loss and hit counts accumulate on the device and are read once at the end (ReadToHost).
  auto totals = torch::zeros({3}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  double count = 0.0;
  for (int64_t b = 0; b < split.batches(); ++b) {
    const Batch batch = transfer(batches.Next());
    auto logits = ForwardLogits(model, batch.images, autocast_dtype);
    auto loss = torch::nn::functional::cross_entropy(
        logits, batch.labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    const int64_t k = std::min<int64_t>(5, logits.size(1));
    auto topk = std::get<1>(logits.topk(k, 1));
    auto hits = topk.eq(batch.labels.unsqueeze(1));
    totals.add_(torch::stack({loss.to(torch::kDouble), hits.select(1, 0).sum().to(torch::kDouble),
                              hits.any(1).sum().to(torch::kDouble)}));
    count += static_cast<double>(batch.labels.size(0));
  }
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
