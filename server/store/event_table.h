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
#include "server/store/sqlite.h"

namespace nmsparse::server {

absl::Status AppendStateChange(Database* db, int64_t run_id, v1::RunState from, v1::RunState to,
                               uint32_t attempt, int64_t now_ms, const std::string& reason);
// Stores the point with a fresh seq and at_ms = now when unset; returns the seq.
absl::StatusOr<int64_t> AppendMetric(Database* db, int64_t run_id, uint32_t attempt, v1::MetricPoint point,
                                     int64_t now_ms);
absl::Status AppendLogs(Database* db, int64_t run_id, uint32_t attempt,
                        const google::protobuf::RepeatedPtrField<v1::LogLine>& lines, int64_t now_ms);

absl::StatusOr<std::vector<v1::StateChange>> StateHistory(Database* db, int64_t run_id);
absl::StatusOr<std::vector<v1::MetricPoint>> MetricPoints(Database* db, int64_t run_id, int64_t from_seq);
// The last point of kind "final" of the given attempt, if any (its values are a run's final metrics when the
// agent's CompleteRun carries none).
absl::StatusOr<v1::MetricPoint> LastFinalPoint(Database* db, int64_t run_id, uint32_t attempt);
absl::StatusOr<std::vector<v1::LogLine>> LogLines(Database* db, int64_t run_id, int64_t from_seq,
                                                  uint32_t limit);
// Every event with seq >= from_seq, in seq order, at most `limit` of them.
absl::StatusOr<std::vector<v1::RunEvent>> EventsFrom(Database* db, int64_t run_id, int64_t from_seq,
                                                     uint32_t limit);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_EVENT_TABLE_H_
