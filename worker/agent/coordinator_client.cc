#include "worker/agent/coordinator_client.h"

#include <grpcpp/grpcpp.h>

#include "common/status_macros.h"
#include "contract/worker_session.h"
#include "schemas/limits.h"

namespace nmsparse::agent {
namespace {

absl::Status ToAbsl(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace

CoordinatorClient::CoordinatorClient(const std::string& address, ClientSecurity security,
                                     std::chrono::milliseconds rpc_timeout)
    : address_(address), token_(security.token), rpc_timeout_(rpc_timeout) {
  grpc::ChannelArguments args;
  // Reconnect quickly once a restarted coordinator is back. (No keepalive pings: servers refuse frequent
  // ones; a silent coordinator shows in failing heartbeats, after which the agent reopens the stream.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // The coordinator's bounds (docs/reliability.md); log lines are cut so that a batch stays far below them.
  args.SetMaxSendMessageSize(limits::kMaxRequestBytes);
  args.SetMaxReceiveMessageSize(limits::kMaxResponseBytes);
  channel_ = grpc::CreateCustomChannel(
      address, security.credentials ? security.credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::WorkerGateway::NewStub(channel_);
}

CoordinatorClient::~CoordinatorClient() = default;

void CoordinatorClient::SetDeadline(grpc::ClientContext* context) const {
  context->set_deadline(std::chrono::system_clock::now() + rpc_timeout_);
  AttachCredentials(context);
}

void CoordinatorClient::AttachCredentials(grpc::ClientContext* context) const {
  AttachToken(token_, context);
  // Proves to the coordinator that this is the process that registered the worker (docs/security.md).
  std::lock_guard<std::mutex> lock(session_mu_);
  if (!session_.empty()) context->AddMetadata(contract::kWorkerSessionMetadata, session_);
}

void CoordinatorClient::set_session(const std::string& session) {
  std::lock_guard<std::mutex> lock(session_mu_);
  session_ = session;
}

absl::StatusOr<v1::RegisterResponse> CoordinatorClient::Register(const v1::RegisterRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::RegisterResponse response;
  NM_RETURN_IF_ERROR(ToAbsl(stub_->Register(&context, request, &response)));
  return response;
}

absl::StatusOr<v1::HeartbeatResponse> CoordinatorClient::Heartbeat(const v1::HeartbeatRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::HeartbeatResponse response;
  NM_RETURN_IF_ERROR(ToAbsl(stub_->Heartbeat(&context, request, &response)));
  return response;
}

absl::Status CoordinatorClient::StartRun(const v1::RunAttempt& run) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::StartRunRequest request;
  *request.mutable_run() = run;
  v1::Ack ack;
  return ToAbsl(stub_->StartRun(&context, request, &ack));
}

absl::Status CoordinatorClient::ReportMetrics(const std::vector<v1::MetricReport>& reports) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Ack ack;
  std::unique_ptr<grpc::ClientWriter<v1::MetricReport>> writer = stub_->ReportMetrics(&context, &ack);
  for (const v1::MetricReport& report : reports) {
    if (!writer->Write(report)) break;  // The stream broke; Finish says why.
  }
  writer->WritesDone();
  return ToAbsl(writer->Finish());
}

absl::Status CoordinatorClient::ReportLog(const v1::LogReport& report) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Ack ack;
  return ToAbsl(stub_->ReportLog(&context, report, &ack));
}

absl::Status CoordinatorClient::CompleteRun(const v1::CompleteRunRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Ack ack;
  return ToAbsl(stub_->CompleteRun(&context, request, &ack));
}

absl::Status CoordinatorClient::UploadModelExport(const std::function<bool(v1::ModelExportUpload*)>& next) {
  grpc::ClientContext context;
  AttachCredentials(&context);
  v1::Ack ack;
  std::unique_ptr<grpc::ClientWriter<v1::ModelExportUpload>> writer =
      stub_->UploadModelExport(&context, &ack);
  v1::ModelExportUpload message;
  while (next(&message)) {
    if (!writer->Write(message)) break;  // The coordinator refused or the caller left; Finish says why.
    message.Clear();
  }
  writer->WritesDone();
  return ToAbsl(writer->Finish());
}

absl::Status CoordinatorClient::StreamAssignments(
    int64_t worker_id, const std::function<void(const v1::Assignment&)>& on_assignment) {
  grpc::ClientContext context;
  AttachCredentials(&context);  // A stream has no deadline: it lasts as long as the worker is connected.
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    if (stream_cancelled_) return absl::CancelledError("assignment stream cancelled");
    stream_context_ = &context;
  }
  v1::AssignmentsRequest request;
  request.set_worker_id(worker_id);
  std::unique_ptr<grpc::ClientReader<v1::Assignment>> reader = stub_->Assignments(&context, request);
  v1::Assignment assignment;
  while (reader->Read(&assignment)) on_assignment(assignment);
  absl::Status status = ToAbsl(reader->Finish());
  std::lock_guard<std::mutex> lock(stream_mu_);
  stream_context_ = nullptr;
  return status;
}

void CoordinatorClient::CancelAssignments(bool for_good) {
  std::lock_guard<std::mutex> lock(stream_mu_);
  stream_cancelled_ = stream_cancelled_ || for_good;
  if (stream_context_ != nullptr) stream_context_->TryCancel();
}

}  // namespace nmsparse::agent
