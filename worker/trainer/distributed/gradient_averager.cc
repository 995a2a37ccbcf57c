#include "worker/trainer/distributed/gradient_averager.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

namespace nmsparse {

GradientAverager::GradientAverager(Distributed& dist, const std::vector<torch::Tensor>& params,
                                   int64_t bucket_bytes)
    : dist_(dist) {
  if (dist.world_size() <= 1) return;
  int64_t bytes = bucket_bytes;  // Start a new bucket at the first parameter.
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (!it->requires_grad()) continue;
    if (bytes >= bucket_bytes) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& bucket = buckets_.back();
    slots_.push_back({*it, static_cast<int64_t>(buckets_.size()) - 1, bucket.numel});
    bucket.numel += it->numel();
    bytes += it->numel() * it->element_size();
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator =
        torch::autograd::impl::grad_accumulator(slots_[i].param);
    hooks_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          OnGradient(i);
          return outputs;
        })));
    accumulators_.push_back(std::move(accumulator));
  }
  Reset();
}

GradientAverager::~GradientAverager() {
  for (size_t i = 0; i < hooks_.size(); ++i) accumulators_[i]->del_post_hook(hooks_[i]);
}

void GradientAverager::Arm(bool armed) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = armed;
}

void GradientAverager::OnGradient(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!armed_) return;
  Slot& slot = slots_[i];
  const torch::Tensor grad = slot.param.grad();
  Bucket& bucket = buckets_[slot.bucket];
  if (!grad.defined() || bucket.started || slot.copied) return;
  CopyIn(slot, grad);
  if (--bucket.pending == 0) StartReadyBuckets();
}

void GradientAverager::CopyIn(Slot& slot, const torch::Tensor& grad) {
  Bucket& bucket = buckets_[slot.bucket];
  torch::NoGradGuard no_grad;
  if (!bucket.flat.defined()) bucket.flat = torch::empty({bucket.numel}, grad.options());
  bucket.flat.narrow(0, slot.offset, grad.numel()).copy_(grad.reshape(-1));
  slot.copied = true;
}

void GradientAverager::StartReadyBuckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Start(buckets_[next_bucket_++]);
  }
}

void GradientAverager::Start(Bucket& bucket) {
  bucket.started = true;
  bucket.wait = dist_.AllReduceSumAsync(bucket.flat);
}

void GradientAverager::Finish() {
  if (slots_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  torch::NoGradGuard no_grad;
  // The slots whose hook did not fire in a bucket not started yet: their gradient as it stands (a zeroed one
  // of a parameter unused this step), or zeros.
  for (Slot& slot : slots_) {
    if (slot.copied || buckets_[slot.bucket].started) continue;
    const torch::Tensor grad = slot.param.grad();
    CopyIn(slot, grad.defined() ? grad : torch::zeros_like(slot.param));
  }
  for (Bucket& bucket : buckets_) bucket.pending = 0;
  StartReadyBuckets();
  for (Bucket& bucket : buckets_) {
    bucket.wait();
    bucket.flat.div_(static_cast<double>(dist_.world_size()));
  }
  for (const Slot& slot : slots_) {
    torch::Tensor grad = slot.param.grad();
    if (grad.defined()) {
      grad.copy_(buckets_[slot.bucket].flat.narrow(0, slot.offset, grad.numel()).view_as(grad));
    }
  }
  Reset();
}

void GradientAverager::Reset() {
  for (Bucket& bucket : buckets_) {
    bucket.pending = 0;
    bucket.started = false;
    bucket.wait = nullptr;
  }
  for (Slot& slot : slots_) {
    slot.copied = false;
    ++buckets_[slot.bucket].pending;
  }
  next_bucket_ = 0;
  armed_ = false;
}

}  // namespace nmsparse
