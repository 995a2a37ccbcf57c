#include "cli/sweep_fetch.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"

namespace nmsparse::cli {

absl::StatusOr<v1::Sweep> GetSweep(const CommandContext& context, int64_t sweep_id) {
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  return context.connection().Call(&v1::Coordinator::Stub::GetSweep, request);
}

absl::StatusOr<v1::GetRunResponse> GetRun(const CommandContext& context, int64_t run_id) {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  return context.connection().Call(&v1::Coordinator::Stub::GetRun, request);
}

absl::StatusOr<std::vector<v1::Run>> ListRuns(const CommandContext& context, int64_t sweep_id,
                                              v1::RunState state, uint32_t limit, uint32_t offset) {
  v1::ListRunsRequest request;
  request.set_sweep_id(sweep_id);
  request.set_state(state);
  request.set_limit(limit);
  request.set_offset(offset);
  NM_ASSIGN_OR_RETURN(v1::ListRunsResponse response,
                      context.connection().Call(&v1::Coordinator::Stub::ListRuns, request));
  return std::vector<v1::Run>(response.runs().begin(), response.runs().end());
}

absl::StatusOr<report::SweepData> FetchSweepData(const CommandContext& context, int64_t sweep_id,
                                                 RunsFetched which) {
  report::SweepData data;
  NM_ASSIGN_OR_RETURN(data.sweep, GetSweep(context, sweep_id));
  NM_RETURN_IF_ERROR(report::ReadRunCurves(
      sweep_id,
      [&](const v1::ListRunCurvesRequest& request) {
        return context.connection().Call(&v1::Coordinator::Stub::ListRunCurves, request);
      },
      &data));
  if (which ==
      RunsFetched::kReported) {  // Never-assigned runs, and runs that reported nothing, draw nothing.
    data.runs.erase(std::remove_if(data.runs.begin(), data.runs.end(),
                                   [](const report::RunData& r) { return r.curve.empty(); }),
                    data.runs.end());
  }
  return data;
}

}  // namespace nmsparse::cli
