#include "cli/sweep_fetch.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"

namespace nmsparse::cli {
namespace {

constexpr size_t kFetchCalls = 8;  // GetRun calls in flight at once.

}  // namespace

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
  std::vector<int64_t> ids;
  for (const v1::Run& run : *runs) {
    if (which == RunsFetched::kReported && run.attempt() == 0) continue;  // Never assigned: no point.
    ids.push_back(run.id());
  }
  // One GetRun per run, kFetchCalls at a time: a sweep of 10k runs waits for 10k round trips otherwise.
  std::vector<absl::StatusOr<v1::GetRunResponse>> fetched(ids.size(), absl::UnknownError("not fetched"));
  std::atomic<size_t> next{0};
  CoordinatorConnection& connection = context.connection();
  auto fetch = [&] {
    for (size_t i = next++; i < ids.size(); i = next++) {
      v1::GetRunRequest request;
      request.set_run_id(ids[i]);
      request.set_include_metrics(true);
      fetched[i] = connection.Call(&v1::Coordinator::Stub::GetRun, request);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kFetchCalls && t < ids.size(); ++t) threads.emplace_back(fetch);
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < ids.size(); ++i) {
    absl::StatusOr<v1::GetRunResponse>& full = fetched[i];
    if (!full.ok()) {
      return absl::Status(full.status().code(), absl::StrCat("run ", ids[i], " of sweep ", sweep_id, ": ",
                                                             full.status().message()));
    }
    if (which == RunsFetched::kReported && full->metrics().empty()) continue;
    data.runs.push_back({std::move(*full->mutable_run()),
                         {std::make_move_iterator(full->mutable_metrics()->begin()),
                          std::make_move_iterator(full->mutable_metrics()->end())}});
  }
  return data;
}

}  // namespace nmsparse::cli
