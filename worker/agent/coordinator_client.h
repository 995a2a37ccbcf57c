// The agent's side of the WorkerGateway service: one channel, a deadline on every unary call, the assignment
// stream that can be cancelled from another thread, and gRPC statuses turned into absl::Status.
#ifndef NMSPARSE_WORKER_AGENT_COORDINATOR_CLIENT_H_
#define NMSPARSE_WORKER_AGENT_COORDINATOR_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/client_security.h"
#include "nmsparse/v1/worker_gateway.grpc.pb.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace nmsparse::agent {

class CoordinatorClient {
 public:
  // `security`: the token sent with every call and the channel credentials (plaintext when unset).
  explicit CoordinatorClient(const std::string& address, ClientSecurity security = {},
                             std::chrono::milliseconds rpc_timeout = std::chrono::milliseconds(10000));
  ~CoordinatorClient();

  const std::string& address() const { return address_; }

  // The registration's session (contract/worker_session.h), sent with every call once known ("": not sent).
  void set_session(const std::string& session);

  absl::StatusOr<v1::RegisterResponse> Register(const v1::RegisterRequest& request);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request);
  absl::Status StartRun(const v1::RunAttempt& run);
  // Sends the points on one client stream.
  absl::Status ReportMetrics(const std::vector<v1::MetricReport>& reports);
  absl::Status ReportLog(const v1::LogReport& report);
  absl::Status CompleteRun(const v1::CompleteRunRequest& request);

  // Sends the messages `next` fills (it returns false after the last) on one UploadModelExport stream. No
  // deadline: a large model takes as long as its reader; the coordinator bounds the wait.
  absl::Status UploadModelExport(const std::function<bool(v1::ModelExportUpload*)>& next);

  // Reads the worker's assignment stream until the coordinator ends it, the connection fails, or
  // CancelAssignments() is called; `on_assignment` runs for each assignment.
  absl::Status StreamAssignments(int64_t worker_id,
                                 const std::function<void(const v1::Assignment&)>& on_assignment);
  // Ends the open stream; with `for_good`, later StreamAssignments calls return CANCELLED at once.
  void CancelAssignments(bool for_good);

 private:
  void SetDeadline(grpc::ClientContext* context) const;  // And AttachCredentials.
  // The token and the registration's session.
  void AttachCredentials(grpc::ClientContext* context) const;

  const std::string address_;
  const std::string token_;
  const std::chrono::milliseconds rpc_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerGateway::Stub> stub_;
  std::mutex stream_mu_;
  grpc::ClientContext* stream_context_ = nullptr;  // The open assignment stream, for CancelAssignments.
  bool stream_cancelled_ = false;
  mutable std::mutex session_mu_;
  std::string session_;
};

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_COORDINATOR_CLIENT_H_
