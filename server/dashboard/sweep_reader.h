// The dashboard's reads: the gRPC API's own handlers (CoordinatorService), called in process, so the
// dashboard shows exactly what `nmctl` would; answers as the same JSON as `nmctl --json`
// (common/proto_json.h).
#ifndef NMSPARSE_SERVER_DASHBOARD_SWEEP_READER_H_
#define NMSPARSE_SERVER_DASHBOARD_SWEEP_READER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "common/proto_json.h"
#include "report/sweep_data.h"
#include "server/api/coordinator_service.h"

namespace nmsparse::server {

class SweepReader {
 public:
  explicit SweepReader(CoordinatorService* coordinator) : coordinator_(coordinator) {}

  absl::StatusOr<Json> Sweeps() const;
  // {"sweep": ..., "runs": [...]}.
  absl::StatusOr<Json> Sweep(int64_t sweep_id) const;
  // GetSweep (its run counts are kept by the store: O(1) in the runs).
  absl::StatusOr<v1::Sweep> SweepProto(int64_t sweep_id) const;
  // ListRuns: every run of the sweep, without metric points.
  absl::StatusOr<std::vector<v1::Run>> Runs(int64_t sweep_id) const;
  // GetRun with every metric point, and "final_texts": each final metric in nmctl's number format
  // (common/metric_text.h), the one the pages show.
  absl::StatusOr<Json> Run(int64_t run_id) const;
  // Up to `limit` log lines from `from_seq`.
  absl::StatusOr<Json> Logs(int64_t run_id, int64_t from_seq, uint32_t limit) const;
  // What the report's figures are drawn from: the sweep, then its runs and points by ListRunCurves pages.
  absl::StatusOr<report::SweepData> SweepData(int64_t sweep_id) const;

 private:
  CoordinatorService* coordinator_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_SWEEP_READER_H_
