#include "worker/agent/report_outbox.h"

#include <algorithm>

namespace nmsparse::agent {

bool SameAttempt(const v1::RunAttempt& a, const v1::RunAttempt& b) {
  return a.run_id() == b.run_id() && a.attempt() == b.attempt();
}

void ReportOutbox::Push(Report report) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    report.id = next_id_++;
    queue_.push_back(std::move(report));
    EnforceCapacityLocked();
  }
  cv_.notify_all();
}

void ReportOutbox::EnforceCapacityLocked() {
  for (Report::Kind victim : {Report::Kind::kLog, Report::Kind::kMetric}) {
    while (queue_.size() > capacity_) {
      auto it =
          std::find_if(queue_.begin(), queue_.end(), [victim](const Report& r) { return r.kind == victim; });
      if (it == queue_.end()) break;
      queue_.erase(it);
      ++dropped_;
    }
  }
}

std::vector<Report> ReportOutbox::PeekBatch(size_t max_batch, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return closed_ || !queue_.empty(); });
  std::vector<Report> batch;
  if (queue_.empty()) return batch;
  const Report& head = queue_.front();
  batch.push_back(head);
  if (head.kind != Report::Kind::kMetric && head.kind != Report::Kind::kLog) return batch;
  for (size_t i = 1; i < queue_.size() && batch.size() < max_batch; ++i) {
    const Report& next = queue_[i];
    if (next.kind != head.kind || !SameAttempt(next.run, head.run)) break;
    batch.push_back(next);
  }
  return batch;
}

void ReportOutbox::Ack(uint64_t last_id) {
  std::lock_guard<std::mutex> lock(mu_);
  while (!queue_.empty() && queue_.front().id <= last_id) queue_.pop_front();
}

size_t ReportOutbox::DropAttempt(const v1::RunAttempt& run) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t before = queue_.size();
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [&run](const Report& r) { return SameAttempt(r.run, run); }),
               queue_.end());
  return before - queue_.size();
}

size_t ReportOutbox::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

uint64_t ReportOutbox::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void ReportOutbox::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace nmsparse::agent
