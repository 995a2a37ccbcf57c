// The agent's ordered queue of reports to the coordinator. Reports wait here until the coordinator takes or
// refuses them (report_fate.h), and are sent again in order while it is away or cannot store them; the queue
// is bounded: past its capacity log lines are dropped first, then the oldest metric points (StartRun and
// CompleteRun reports and final points, which carry a run's final metrics, are never dropped). A flood of log
// lines keeps its head and its tail: the oldest half of the queue goes out as it is, the lines just after it
// are dropped, and the line after a gap carries how many of its attempt's lines were dropped just before it
// (v1.LogLine.dropped_before), so that the coordinator's count is true.
#ifndef NMSPARSE_WORKER_AGENT_REPORT_OUTBOX_H_
#define NMSPARSE_WORKER_AGENT_REPORT_OUTBOX_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "nmsparse/v1/worker_gateway.pb.h"

namespace nmsparse::agent {

struct Report {
  enum class Kind { kStart, kMetric, kLog, kComplete };
  Kind kind = Kind::kLog;
  v1::RunAttempt run;
  v1::MetricPoint point;            // kMetric.
  v1::LogLine line;                 // kLog.
  v1::CompleteRunRequest complete;  // kComplete.
  uint64_t id = 0;                  // Assigned by the outbox, increasing.
};

bool SameAttempt(const v1::RunAttempt& a, const v1::RunAttempt& b);

class ReportOutbox {
 public:
  explicit ReportOutbox(size_t capacity) : capacity_(capacity) {}

  void Push(Report report);

  // The reports at the head that go out in one RPC: consecutive metric points (or log lines) of one attempt,
  // up to `max_batch`, or a single StartRun/CompleteRun. Waits up to `timeout` for a report; does not remove.
  std::vector<Report> PeekBatch(size_t max_batch, std::chrono::milliseconds timeout);

  // Removes the head reports up to and including id `last_id` (a batch that was sent or given up).
  void Ack(uint64_t last_id);

  // Removes every report of an attempt (fenced by the coordinator, or stopped as stale). Returns how many.
  size_t DropAttempt(const v1::RunAttempt& run);

  size_t size() const;
  uint64_t dropped() const;

  // Attempts that started losing log lines since the last call (for the agent's log), once each.
  std::vector<v1::RunAttempt> TakeNewlyDropping();
  // Log lines of the attempt dropped in all; forgets the attempt.
  uint64_t TakeDroppedLogLines(const v1::RunAttempt& run);

  // Wakes PeekBatch waiters for good.
  void Close();

 private:
  using AttemptKey = std::pair<int64_t, uint32_t>;
  void EnforceCapacityLocked();
  bool DropLogLineLocked();

  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Report> queue_;
  uint64_t next_id_ = 1;
  uint64_t dropped_ = 0;
  // Per attempt: log lines dropped in all; dropped lines not yet carried by a later line of the attempt.
  std::map<AttemptKey, uint64_t> dropped_lines_;
  std::map<AttemptKey, uint64_t> pending_gap_;
  std::vector<v1::RunAttempt> newly_dropping_;
  bool closed_ = false;
};

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_REPORT_OUTBOX_H_
