#include "worker/trainer/data/prefetch_loader.h"

#include <stdexcept>
#include <string>

namespace nmsparse {

PrefetchLoader::PrefetchLoader(MakeBatch make, int64_t first, int64_t end, int threads, int depth)
    : make_(std::move(make)),
      end_(end),
      slots_(static_cast<size_t>(std::max(1, depth))),
      next_claim_(first),
      next_out_(first) {
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { Work(); });
}

PrefetchLoader::~PrefetchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  space_.notify_all();
  for (auto& t : threads_) t.join();
}

void PrefetchLoader::Work() {
  const auto depth = static_cast<int64_t>(slots_.size());
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // A position may be claimed once its slot's previous occupant (position - depth) was consumed.
    space_.wait(lock, [&] { return stop_ || next_claim_ >= end_ || next_claim_ < next_out_ + depth; });
    if (stop_ || next_claim_ >= end_) return;
    const int64_t position = next_claim_++;
    Slot& slot = slots_[position % depth];
    slot.position = position;
    lock.unlock();
    std::optional<HostBatch> batch;
    std::exception_ptr error;
    try {
      batch = make_(position);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    slot.batch = std::move(batch);
    slot.error = error;
    ready_.notify_all();
  }
}

HostBatch PrefetchLoader::Next() {
  if (next_out_ >= end_) {
    throw std::out_of_range("PrefetchLoader: no batch after position " + std::to_string(end_ - 1));
  }
  if (threads_.empty()) return make_(next_out_++);
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[next_out_ % static_cast<int64_t>(slots_.size())];
  ready_.wait(lock, [&] { return slot.position == next_out_ && (slot.batch.has_value() || slot.error); });
  std::exception_ptr error = slot.error;
  std::optional<HostBatch> batch = std::move(slot.batch);
  slot.batch.reset();
  slot.error = nullptr;
  ++next_out_;
  lock.unlock();
  space_.notify_all();
  if (error) std::rethrow_exception(error);
  return std::move(*batch);
}

}  // namespace nmsparse
