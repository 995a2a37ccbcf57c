// How an agent sends its outbox to the coordinator: in batches, in order, retrying what was not taken.
#include "absl/strings/str_cat.h"
#include "worker/agent/agent.h"
#include "worker/agent/agent_log.h"
#include "worker/agent/report_fate.h"
#include "worker/agent/run_attempt.h"

namespace nmsparse::agent {
namespace {

constexpr size_t kMaxBatch = 256;

}  // namespace

absl::Status Agent::Send(const std::vector<Report>& batch) {
  const Report& head = batch.front();
  switch (head.kind) {
    case Report::Kind::kStart:
      return client_->StartRun(head.run);
    case Report::Kind::kComplete:
      return client_->CompleteRun(head.complete);
    case Report::Kind::kMetric: {
      std::vector<v1::MetricReport> reports;
      for (const Report& r : batch) {
        v1::MetricReport& report = reports.emplace_back();
        *report.mutable_run() = r.run;
        *report.mutable_point() = r.point;
      }
      return client_->ReportMetrics(reports);
    }
    case Report::Kind::kLog: {
      v1::LogReport report;
      *report.mutable_run() = head.run;
      for (const Report& r : batch) {
        v1::LogLine* line = report.add_lines();
        *line = r.line;
        line->set_report_id(r.id);  // The coordinator stores each line once, however often it is sent.
      }
      return client_->ReportLog(report);
    }
  }
  return absl::InternalError("unknown report kind");
}

void Agent::ReportLoop() {
  std::chrono::milliseconds backoff = kInitialBackoff;
  bool retrying = false;  // The head report was not taken: say so once, and once more when it goes out.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lifecycle_ == Lifecycle::kStopped) return;
    }
    std::vector<Report> batch = outbox_.PeekBatch(kMaxBatch, std::chrono::milliseconds(200));
    for (const v1::RunAttempt& run : outbox_.TakeNewlyDropping()) {
      AgentLog(absl::StrCat("the outbox is full (", options_.outbox_capacity,
                            " reports): dropping log lines of ", AttemptName(run),
                            " between its first and its latest; the count follows when it ends"));
    }
    if (batch.empty()) continue;
    const Report& head = batch.front();
    const absl::Status status = Send(batch);
    const ReportFate fate = FateOf(status);
    if (fate == ReportFate::kRetry) {
      if (!retrying) {
        AgentLog(absl::StrCat("the coordinator did not take a report of ", AttemptName(head.run), " (",
                              status.ToString(), "); keeping it and the reports after it (", outbox_.size(),
                              " waiting), sending again with back-off"));
      }
      retrying = true;
      // Keep the batch: it goes out again, in order, once the coordinator takes it.
      Backoff(&backoff, /*reporter=*/true, options_.max_backoff);
      continue;
    }
    if (retrying)
      AgentLog(absl::StrCat("the coordinator takes reports again (", outbox_.size(), " waiting)"));
    retrying = false;
    backoff = kInitialBackoff;
    outbox_.Ack(batch.back().id);
    if (fate == ReportFate::kFenced) {
      // This attempt is no longer the run's current one. Stop its processes, drop its reports.
      AgentLog(absl::StrCat(AttemptName(head.run), " refused by the coordinator (", status.message(),
                            "); stopping it"));
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = runs_.find(head.run.run_id());
        if (it != runs_.end() && it->second.attempt == head.run.attempt()) {
          it->second.supervisor->Stop(StopReason::kStale);
          it->second.awaiting_delivery = false;
        }
      }
      outbox_.DropAttempt(head.run);
      continue;
    }
    if (fate == ReportFate::kRefused) {
      AgentLog(absl::StrCat("the coordinator refused a report of ", AttemptName(head.run),
                            " for good: ", status.ToString()));
    }
    if (head.kind == Report::Kind::kComplete) {
      if (const uint64_t dropped = outbox_.TakeDroppedLogLines(head.run); dropped > 0) {
        AgentLog(absl::StrCat(AttemptName(head.run), ": ", dropped,
                              " log line(s) dropped in all (the outbox was full); the run's log has a notice "
                              "where they were"));
      }
      Retire(head.run);
    }
  }
}

}  // namespace nmsparse::agent
