// Early stopping in the coordinator: each stored epoch metric point of a sweep with an early_stopping block
// is checked against the sweep's rungs; at a rung the ASHA rule (server/search/asha_policy.h) decides, the
// decision is stored (rung_results) and logged in the run's log, and a stopped run is asked to stop
// (StopRunEarly).
#ifndef NMSPARSE_SERVER_SEARCH_EARLY_STOPPING_H_
#define NMSPARSE_SERVER_SEARCH_EARLY_STOPPING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/run_table.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// Runs inside the Store::Write that stored `point` for `run` (the attempt already checked). Returns true when
// the run was stopped. A run that already has a decision at this rung (a resumed attempt reporting the epoch
// again, or a report after a coordinator restart) keeps it: decisions are taken once.
absl::StatusOr<bool> ApplyEarlyStopping(Database* db, const RunRecord& run, const v1::MetricPoint& point,
                                        int64_t now_ms);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SEARCH_EARLY_STOPPING_H_
