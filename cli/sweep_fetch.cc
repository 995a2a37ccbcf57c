#include "cli/sweep_fetch.h"

#include "absl/strings/str_cat.h"

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
  absl::StatusOr<v1::ListRunsResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::ListRuns, request);
  if (!response.ok()) return response.status();
  return std::vector<v1::Run>(response->runs().begin(), response->runs().end());
}

absl::StatusOr<report::SweepData> FetchSweepData(const CommandContext& context, int64_t sweep_id,
                                                 RunsFetched which) {
  report::SweepData data;
  absl::StatusOr<v1::Sweep> sweep = GetSweep(context, sweep_id);
  if (!sweep.ok()) return sweep.status();
  data.sweep = std::move(*sweep);
  absl::StatusOr<std::vector<v1::Run>> runs = ListRuns(context, sweep_id, v1::RUN_STATE_UNSPECIFIED);
  if (!runs.ok()) return runs.status();
  for (const v1::Run& run : *runs) {
    if (which == RunsFetched::kReported && run.attempt() == 0) continue;  // Never assigned: no point.
    v1::GetRunRequest request;
    request.set_run_id(run.id());
    request.set_include_metrics(true);
    absl::StatusOr<v1::GetRunResponse> full =
        context.connection().Call(&v1::Coordinator::Stub::GetRun, request);
    if (!full.ok()) {
      return absl::Status(full.status().code(), absl::StrCat("run ", run.id(), " of sweep ", sweep_id, ": ",
                                                             full.status().message()));
    }
    if (which == RunsFetched::kReported && full->metrics().empty()) continue;
    data.runs.push_back({full->run(), {full->metrics().begin(), full->metrics().end()}});
  }
  return data;
}

}  // namespace nmsparse::cli
