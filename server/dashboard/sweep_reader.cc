#include "server/dashboard/sweep_reader.h"

#include <grpcpp/grpcpp.h>

#include "common/metric_text.h"
#include "common/status_macros.h"

namespace nmsparse::server {
namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  return s.ok() ? absl::OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// One read handler of the API, called in process (the read handlers do not look at their context).
template <class Request, class Response>
absl::StatusOr<Response> Call(CoordinatorService* service,
                              grpc::Status (CoordinatorService::*method)(grpc::ServerContext*, const Request*,
                                                                         Response*),
                              const Request& request) {
  grpc::ServerContext context;
  Response response;
  NM_RETURN_IF_ERROR(FromGrpc((service->*method)(&context, &request, &response)));
  return response;
}

}  // namespace

absl::StatusOr<Json> SweepReader::Sweeps() const {
  NM_ASSIGN_OR_RETURN(const v1::ListSweepsResponse response,
                      Call(coordinator_, &CoordinatorService::ListSweeps, v1::ListSweepsRequest()));
  return ToJson(response);
}

absl::StatusOr<Json> SweepReader::Sweep(int64_t sweep_id) const {
  v1::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(sweep_id);
  NM_ASSIGN_OR_RETURN(const v1::Sweep sweep,
                      Call(coordinator_, &CoordinatorService::GetSweep, sweep_request));
  v1::ListRunsRequest runs_request;
  runs_request.set_sweep_id(sweep_id);
  NM_ASSIGN_OR_RETURN(const v1::ListRunsResponse runs,
                      Call(coordinator_, &CoordinatorService::ListRuns, runs_request));
  return Json{{"sweep", ToJson(sweep)}, {"runs", ToJson(runs)["runs"]}};
}

absl::StatusOr<v1::Sweep> SweepReader::SweepProto(int64_t sweep_id) const {
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  return Call(coordinator_, &CoordinatorService::GetSweep, request);
}

absl::StatusOr<std::vector<v1::Run>> SweepReader::Runs(int64_t sweep_id) const {
  v1::ListRunsRequest request;
  request.set_sweep_id(sweep_id);
  NM_ASSIGN_OR_RETURN(v1::ListRunsResponse runs, Call(coordinator_, &CoordinatorService::ListRuns, request));
  return std::vector<v1::Run>(std::make_move_iterator(runs.mutable_runs()->begin()),
                              std::make_move_iterator(runs.mutable_runs()->end()));
}

absl::StatusOr<Json> SweepReader::Run(int64_t run_id) const {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  request.set_include_metrics(true);
  NM_ASSIGN_OR_RETURN(const v1::GetRunResponse run, Call(coordinator_, &CoordinatorService::GetRun, request));
  Json json = ToJson(run);
  Json texts = Json::object();
  for (const auto& [name, value] : run.run().final_metrics()) texts[name] = FormatMetric(value);
  json["final_texts"] = std::move(texts);
  return json;
}

absl::StatusOr<Json> SweepReader::Logs(int64_t run_id, int64_t from_seq, uint32_t limit) const {
  v1::GetLogsRequest request;
  request.set_run_id(run_id);
  request.set_from_seq(from_seq);
  request.set_limit(limit);
  NM_ASSIGN_OR_RETURN(const v1::GetLogsResponse logs,
                      Call(coordinator_, &CoordinatorService::GetLogs, request));
  return ToJson(logs);
}

absl::StatusOr<report::SweepData> SweepReader::SweepData(int64_t sweep_id) const {
  report::SweepData data;
  v1::GetSweepRequest sweep_request;
  sweep_request.set_sweep_id(sweep_id);
  NM_ASSIGN_OR_RETURN(data.sweep, Call(coordinator_, &CoordinatorService::GetSweep, sweep_request));
  NM_RETURN_IF_ERROR(report::ReadRunCurves(
      sweep_id,
      [this](const v1::ListRunCurvesRequest& request) {
        return Call(coordinator_, &CoordinatorService::ListRunCurves, request);
      },
      &data));
  return data;
}

}  // namespace nmsparse::server
