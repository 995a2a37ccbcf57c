#include "worker/agent/report_outbox.h"

#include <algorithm>

#include "contract/metric_line.h"

namespace nmsparse::agent {

bool SameAttempt(const v1::RunAttempt& a, const v1::RunAttempt& b) {
  return a.run_id() == b.run_id() && a.attempt() == b.attempt();
}

void ReportOutbox::Push(Report report) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    report.id = next_id_++;
    if (report.kind == Report::Kind::kLog) {  // Lines dropped when nothing of the attempt came after them.
      auto pending = pending_gap_.find({report.run.run_id(), report.run.attempt()});
      if (pending != pending_gap_.end()) {
        report.line.set_dropped_before(report.line.dropped_before() + pending->second);
        pending_gap_.erase(pending);
      }
    }
    queue_.push_back(std::move(report));
    EnforceCapacityLocked();
  }
  cv_.notify_all();
}

void ReportOutbox::EnforceCapacityLocked() {
  while (queue_.size() > capacity_ && DropLogLineLocked()) {
  }
  while (queue_.size() > capacity_) {
    // A final point is the one carrier of its run's final metrics: kept, like StartRun and CompleteRun.
    auto it = std::find_if(queue_.begin(), queue_.end(), [](const Report& r) {
      return r.kind == Report::Kind::kMetric && r.point.kind() != contract::kKindFinal;
    });
    if (it == queue_.end()) break;
    queue_.erase(it);
    ++dropped_;
  }
}

// Drops the first log line after the oldest half of the queue (or the oldest one, when the whole queue is
// that half), so that a flood keeps its head and its tail; the attempt's next line carries the count.
bool ReportOutbox::DropLogLineLocked() {
  const auto is_log = [](const Report& r) { return r.kind == Report::Kind::kLog; };
  auto it = std::find_if(queue_.begin() + static_cast<std::ptrdiff_t>(capacity_ / 2), queue_.end(), is_log);
  if (it == queue_.end()) it = std::find_if(queue_.begin(), queue_.end(), is_log);
  if (it == queue_.end()) return false;
  const AttemptKey key{it->run.run_id(), it->run.attempt()};
  const uint64_t gap = 1 + it->line.dropped_before();
  if (dropped_lines_[key] == 0) newly_dropping_.push_back(it->run);
  dropped_lines_[key] += 1;
  const auto next = std::find_if(it + 1, queue_.end(), [&](const Report& r) {
    return is_log(r) && r.run.run_id() == key.first && r.run.attempt() == key.second;
  });
  if (next != queue_.end()) {
    next->line.set_dropped_before(next->line.dropped_before() + gap);
  } else {
    pending_gap_[key] += gap;
  }
  queue_.erase(it);
  ++dropped_;
  return true;
}

std::vector<v1::RunAttempt> ReportOutbox::TakeNewlyDropping() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(newly_dropping_, {});
}

uint64_t ReportOutbox::TakeDroppedLogLines(const v1::RunAttempt& run) {
  std::lock_guard<std::mutex> lock(mu_);
  const AttemptKey key{run.run_id(), run.attempt()};
  pending_gap_.erase(key);
  auto it = dropped_lines_.find(key);
  if (it == dropped_lines_.end()) return 0;
  const uint64_t n = it->second;
  dropped_lines_.erase(it);
  return n;
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
