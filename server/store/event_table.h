// A run's append-only history: state changes, metric points and log lines. All three draw their `seq` from
// one per-run counter (runs.next_seq), so a watcher can resume every kind of event from one number.
// Callers hold the Store lock.
#ifndef NMSPARSE_SERVER_STORE_EVENT_TABLE_H_
#define NMSPARSE_SERVER_STORE_EVENT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/limits.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// What one run may store (docs/reliability.md, "Limits"); nmserver's --max_log_lines_per_run and
// --max_metric_points_per_run.
struct EventCaps {
  int64_t max_log_lines = limits::kDefaultMaxLogLinesPerRun;
  int64_t max_metric_points = limits::kDefaultMaxMetricPointsPerRun;
};

absl::Status AppendStateChange(Database* db, int64_t run_id, v1::RunState from, v1::RunState to,
                               uint32_t attempt, int64_t now_ms, const std::string& reason);
// The seq of the attempt's stored point with the same kind, epoch and step as `point` (one trainer line: a
// trainer prints each once per attempt), 0 when none is stored. Workers send a report again until it is
// acknowledged; the gateway stores such a point once (WorkerGatewayService::ReportMetrics).
absl::StatusOr<int64_t> StoredMetricSeq(Database* db, int64_t run_id, uint32_t attempt,
                                        const v1::MetricPoint& point);
// Stores the point with a fresh seq and at_ms = now when unset; returns the seq. Once the run holds
// caps.max_metric_points points, further points (except those of kind "final", which carry a run's final
// metrics) are dropped: the result is 0 and the run's notice line counts them (see AppendLogs).
// A "progress" point only says where the attempt is now: it replaces the attempt's previous one and does not
// count toward the cap, so a run of days, reporting progress every few seconds, keeps room for its curves.
absl::StatusOr<int64_t> AppendMetric(Database* db, int64_t run_id, uint32_t attempt, v1::MetricPoint point,
                                     int64_t now_ms, const EventCaps& caps = {});
// Stores the lines, each cut to limits::kMaxLogLineBytes; returns how many were stored (later lines of the
// batch may have evicted some of them). Past caps.max_log_lines the run keeps the head and the tail of its
// log: the line at half the cap becomes one notice, "[nmserver] N log line(s) dropped here, ...", and each
// later line evicts the oldest line after it; N counts every line of the run not stored, those its worker
// dropped (v1.LogLine.dropped_before) included, and is rewritten in place. Lines numbered by their worker
// (v1.LogLine.report_id) at or below the attempt's last stored number were stored before and are skipped.
absl::StatusOr<int64_t> AppendLogs(Database* db, int64_t run_id, uint32_t attempt,
                                   const google::protobuf::RepeatedPtrField<v1::LogLine>& lines,
                                   int64_t now_ms, const EventCaps& caps = {});

absl::StatusOr<std::vector<v1::StateChange>> StateHistory(Database* db, int64_t run_id);
absl::StatusOr<std::vector<v1::MetricPoint>> MetricPoints(Database* db, int64_t run_id, int64_t from_seq);
// The last point of kind "final" of the given attempt, if any: its values are the run's final metrics.
absl::StatusOr<v1::MetricPoint> LastFinalPoint(Database* db, int64_t run_id, uint32_t attempt);
// The furthest a run's training got by its step and epoch points, over every attempt: the largest global
// step and 0-based epoch index recorded (0 and 0 when it recorded none). A checkpoint is about that far
// along: its step is the last point's or a little past it.
struct RecordedProgress {
  uint64_t step = 0;
  uint32_t epoch = 0;
};
absl::StatusOr<RecordedProgress> LastRecordedProgress(Database* db, int64_t run_id);
absl::StatusOr<std::vector<v1::LogLine>> LogLines(Database* db, int64_t run_id, int64_t from_seq,
                                                  uint32_t limit);
// Every event with seq >= from_seq, in seq order, at most `limit` of them.
absl::StatusOr<std::vector<v1::RunEvent>> EventsFrom(Database* db, int64_t run_id, int64_t from_seq,
                                                     uint32_t limit);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_EVENT_TABLE_H_
