// Data-parallel gradient averaging overlapped with backward, as PyTorch's DDP does it. The parameters are cut
// into buckets of about `bucket_bytes`, in reverse order (backward produces the last layers' gradients
// first). A hook on each parameter's gradient accumulator copies its gradient into its bucket's flat buffer;
// when a bucket is full, it is all-reduced asynchronously while backward goes on (buckets start in one fixed
// order on every rank, as collectives must). Finish() waits for them, divides by the world size and writes
// the averages back. Replaces an all-reduce of everything after backward through a full concatenation and
// copy.
#ifndef NMSPARSE_WORKER_TRAINER_DISTRIBUTED_GRADIENT_AVERAGER_H_
#define NMSPARSE_WORKER_TRAINER_DISTRIBUTED_GRADIENT_AVERAGER_H_

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "worker/trainer/distributed/distributed.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace nmsparse {

class GradientAverager {
 public:
  // `params` must outlive the averager (the model's). Nothing is hooked when there is one rank.
  GradientAverager(Distributed& dist, const std::vector<torch::Tensor>& params,
                   int64_t bucket_bytes = 25 << 20);
  ~GradientAverager();
  GradientAverager(const GradientAverager&) = delete;
  GradientAverager& operator=(const GradientAverager&) = delete;

  // Before a backward pass: whether it is the one whose gradients are averaged (the last micro-batch of a
  // gradient accumulation); the hooks do nothing in the others.
  void Arm(bool armed);
  // After the armed backward pass: starts the buckets still waiting (a parameter that got no gradient this
  // step contributes zeros and keeps no gradient), waits for all, writes the averaged gradients back.
  void Finish();

  int64_t buckets() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  struct Slot {
    torch::Tensor param;
    int64_t bucket = 0, offset = 0;
    bool copied = false;  // Its gradient is in the bucket this step.
  };
  struct Bucket {
    torch::Tensor flat;  // Allocated at the first use, on the gradients' device and in their dtype.
    int64_t numel = 0;
    int64_t pending = 0;   // Gradients not yet copied in this step.
    bool started = false;  // Its all-reduce is running.
    std::function<void()> wait;
  };
  void OnGradient(size_t slot);
  void CopyIn(Slot& slot, const torch::Tensor& grad);
  void StartReadyBuckets();  // In bucket order, while the next one is full.
  void Start(Bucket& bucket);
  void Reset();

  Distributed& dist_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // Kept alive: they hold the hooks.
  std::vector<uintptr_t> hooks_;                                      // Removed by the destructor.
  std::mutex mu_;
  bool armed_ = false;
  size_t next_bucket_ = 0;  // The next bucket to start.
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DISTRIBUTED_GRADIENT_AVERAGER_H_
