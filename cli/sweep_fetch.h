// Reading sweeps and runs from the coordinator: a sweep, a run, a sweep's runs, and for reports every run's
// metric points.
#ifndef NMSPARSE_CLI_SWEEP_FETCH_H_
#define NMSPARSE_CLI_SWEEP_FETCH_H_

#include <vector>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "nmsparse/v1/sweep.pb.h"
#include "report/sweep_data.h"

namespace nmsparse::cli {

absl::StatusOr<v1::Sweep> GetSweep(const CommandContext& context, int64_t sweep_id);
absl::StatusOr<v1::GetRunResponse> GetRun(const CommandContext& context, int64_t run_id);

// The runs of a sweep (0: of all sweeps) in a state (UNSPECIFIED: any): `limit` of them (0: all) after the
// first `offset`.
absl::StatusOr<std::vector<v1::Run>> ListRuns(const CommandContext& context, int64_t sweep_id,
                                              v1::RunState state, uint32_t limit = 0, uint32_t offset = 0);

enum class RunsFetched {
  kAll,
  kReported,  // Only runs with at least one metric point.
};

// The sweep, its runs and each run's metric points (ListRunCurves, page by page), as reports read them.
absl::StatusOr<report::SweepData> FetchSweepData(const CommandContext& context, int64_t sweep_id,
                                                 RunsFetched which = RunsFetched::kAll);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_SWEEP_FETCH_H_
