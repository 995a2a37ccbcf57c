#include "server/dashboard/sweep_reader.h"

#include <grpcpp/grpcpp.h>

namespace nmsparse::server {
namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  return s.ok() ? absl::OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// One read handler of the API, called in process (the read handlers do not look at their context).
template <class Request, class Response, class Method>
absl::StatusOr<Response> Call(CoordinatorService* service, Method method, const Request& request) {
  grpc::ServerContext context;
  Response response;
  absl::Status s = FromGrpc((service->*method)(&context, &request, &response));
  if (!s.ok()) return s;
  return response;
}

}  // namespace

absl::StatusOr<Json> SweepReader::Sweeps() const {
  auto response = Call<v1::ListSweepsRequest, v1::ListSweepsResponse>(
      coordinator_, &CoordinatorService::ListSweeps, v1::ListSweepsRequest());
  if (!response.ok()) return response.status();
  return ToJson(*response);
}

absl::StatusOr<Json> SweepReader::Sweep(int64_t sweep_id) const {
  v1::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(sweep_id);
  auto sweep =
      Call<v1::GetSweepRequest, v1::Sweep>(coordinator_, &CoordinatorService::GetSweep, sweep_request);
  if (!sweep.ok()) return sweep.status();
  v1::ListRunsRequest runs_request;
  runs_request.set_sweep_id(sweep_id);
  auto runs = Call<v1::ListRunsRequest, v1::ListRunsResponse>(coordinator_, &CoordinatorService::ListRuns,
                                                              runs_request);
  if (!runs.ok()) return runs.status();
  return Json{{"sweep", ToJson(*sweep)}, {"runs", ToJson(*runs)["runs"]}};
}

absl::StatusOr<v1::Sweep> SweepReader::SweepProto(int64_t sweep_id) const {
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  return Call<v1::GetSweepRequest, v1::Sweep>(coordinator_, &CoordinatorService::GetSweep, request);
}

absl::StatusOr<std::vector<v1::Run>> SweepReader::Runs(int64_t sweep_id) const {
  v1::ListRunsRequest request;
  request.set_sweep_id(sweep_id);
  auto runs =
      Call<v1::ListRunsRequest, v1::ListRunsResponse>(coordinator_, &CoordinatorService::ListRuns, request);
  if (!runs.ok()) return runs.status();
  return std::vector<v1::Run>(std::make_move_iterator(runs->mutable_runs()->begin()),
                              std::make_move_iterator(runs->mutable_runs()->end()));
}

absl::StatusOr<Json> SweepReader::Run(int64_t run_id) const {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  request.set_include_metrics(true);
  auto run = Call<v1::GetRunRequest, v1::GetRunResponse>(coordinator_, &CoordinatorService::GetRun, request);
  if (!run.ok()) return run.status();
  return ToJson(*run);
}

absl::StatusOr<Json> SweepReader::Logs(int64_t run_id, int64_t from_seq, uint32_t limit) const {
  v1::GetLogsRequest request;
  request.set_run_id(run_id);
  request.set_from_seq(from_seq);
  request.set_limit(limit);
  auto logs =
      Call<v1::GetLogsRequest, v1::GetLogsResponse>(coordinator_, &CoordinatorService::GetLogs, request);
  if (!logs.ok()) return logs.status();
  return ToJson(*logs);
}

absl::StatusOr<report::SweepData> SweepReader::SweepData(int64_t sweep_id) const {
  report::SweepData data;
  v1::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(sweep_id);
  auto sweep =
      Call<v1::GetSweepRequest, v1::Sweep>(coordinator_, &CoordinatorService::GetSweep, sweep_request);
  if (!sweep.ok()) return sweep.status();
  data.sweep = std::move(*sweep);
  const absl::Status read = report::ReadRunCurves(
      sweep_id,
      [this](const v1::ListRunCurvesRequest& request) {
        return Call<v1::ListRunCurvesRequest, v1::ListRunCurvesResponse>(
            coordinator_, &CoordinatorService::ListRunCurves, request);
      },
      &data);
  if (!read.ok()) return read;
  return data;
}

}  // namespace nmsparse::server
