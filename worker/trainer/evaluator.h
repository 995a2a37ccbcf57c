// Top-1 / top-5 accuracy and cross-entropy of a model on an evaluation set. With several ranks each rank
// evaluates the images rank, rank + world, ... and the counts are summed, so every rank gets the same result.
#ifndef NMSPARSE_WORKER_TRAINER_EVALUATOR_H_
#define NMSPARSE_WORKER_TRAINER_EVALUATOR_H_

#include <cstdint>
#include <set>
#include <vector>

#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/dataset.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/models/classifier.h"

namespace nmsparse {

struct EvalResult {
  double loss = 0.0;  // Mean cross-entropy (no label smoothing).
  double top1 = 0.0;  // Fractions in [0, 1].
  double top5 = 0.0;  // Top-min(5, classes).
  int64_t images = 0;
};

// How one rank's share of an evaluation set of `size` images is batched: images rank, rank + world, ..., in
// batches of max(1, batch_size / world), the last one partial.
class EvalSplit {
 public:
  EvalSplit(int64_t size, int64_t batch_size, int rank, int world);
  int64_t batches() const { return (images_ + batch_ - 1) / batch_; }
  // The dataset indices of batch `b` (< batches()).
  std::vector<int64_t> Indices(int64_t b) const;
  // The distinct batch sizes (the full one and the last partial one), for set-up before training.
  std::set<int64_t> BatchSizes() const;

 private:
  int rank_, world_;
  int64_t images_, batch_;  // This rank's images; the full batch.
};

// Puts the model in eval mode and back in train mode afterwards. `autocast_dtype`: forward passes under
// autocast to it (the run's precision; Undefined: fp32), the loss and accuracies from fp32 logits.
// `loader_threads` > 0 builds the batches ahead on that many threads (into pinned memory on a GPU), as
// training does, so that the device does not wait for the host; 0 builds each in the loop. Images are read
// for `epoch` (Dataset::ReadForEpoch): the epoch under which images that cannot be decoded are logged.
EvalResult Evaluate(ClassifierImpl& model, const Dataset& data, const Normalization& norm, int64_t batch_size,
                    Distributed& dist, torch::Device device = torch::kCPU,
                    c10::ScalarType autocast_dtype = c10::ScalarType::Undefined, int loader_threads = 0,
                    int epoch = 0);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_EVALUATOR_H_
