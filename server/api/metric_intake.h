// What the WorkerGateway takes of a worker's metric reports: the metric-line contract (docs/nmtrain.md,
// contract/metric_line.h) enforced where the data enters the coordinator, before anything is stored. A point
// has a known kind, finite values, an epoch and step within bounds, and an attempt has one final point. A
// refusal is INVALID_ARGUMENT naming the field, so the agent drops that report (worker/agent/report_fate.h)
// and the points after it still go through.
#ifndef NMSPARSE_SERVER_API_METRIC_INTAKE_H_
#define NMSPARSE_SERVER_API_METRIC_INTAKE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nmsparse/v1/worker_gateway.pb.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// The point alone: its kind, values, epoch and step. InvalidArgument names the field
// ("point.values[\"loss\"]").
absl::Status CheckMetricPoint(const v1::MetricPoint& point);

// Stores the report's point for `run` (its attempt and session already checked) with the decision it leads to
// (early stopping), inside the caller's transaction. A point sent again (its answer was lost) is stored once:
// OK and false. Also refuses a second final point of the attempt. True when the point was stored (false past
// the run's cap, see AppendMetric).
absl::StatusOr<bool> TakeMetricReport(Database* db, const RunRecord& run, const v1::MetricReport& report,
                                      const EventCaps& caps, int64_t now_ms);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_API_METRIC_INTAKE_H_
