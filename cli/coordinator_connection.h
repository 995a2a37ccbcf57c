// nmctl's link to the coordinator: the Coordinator stub, a deadline and the bearer token on every call, TLS
// when configured (common/client_security.h), and gRPC errors turned into absl::Status with a message a
// person can act on (an unreachable coordinator names its address).
#ifndef NMSPARSE_CLI_COORDINATOR_CONNECTION_H_
#define NMSPARSE_CLI_COORDINATOR_CONNECTION_H_

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/client_security.h"
#include "common/status_macros.h"
#include "nmsparse/v1/coordinator.grpc.pb.h"

namespace nmsparse::cli {

class CoordinatorConnection {
 public:
  // A token file or TLS file that cannot be used makes every call fail with that error (Check), so that
  // offline commands never read them.
  CoordinatorConnection(std::string address, const ClientSecurityFlags& security);

  const std::string& address() const { return address_; }
  v1::Coordinator::Stub& stub() { return *stub_; }

  // A context with the token and the default deadline (30 s); `streaming` leaves it without deadline (watch,
  // follow).
  std::unique_ptr<grpc::ClientContext> Context(bool streaming = false) const;

  // The status of a finished call, as absl::Status. UNAVAILABLE (and DEADLINE_EXCEEDED before any answer)
  // become "cannot reach the coordinator at ADDR ...".
  absl::Status Check(const grpc::Status& status) const;

  // Check of a finished call whose answer came from nmserver: one that speaks another wire version
  // (common/version.h; an nmserver of wire version 1 says none) is refused, naming both versions, whatever
  // the call's own status said.
  absl::Status Check(const grpc::ClientContext& context, const grpc::Status& status) const;

  // One unary call with the default deadline, e.g. Call(&v1::Coordinator::Stub::GetRun, request).
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (v1::Coordinator::Stub::*method)(grpc::ClientContext*,
                                                                              const Request&, Response*),
                                const Request& request) {
    std::unique_ptr<grpc::ClientContext> context = Context();
    Response response;
    const grpc::Status answer = (stub_.get()->*method)(context.get(), request, &response);
    absl::Status status = Check(*context, answer);
    if (!status.ok()) return status;
    return response;
  }

 private:
  std::string address_;
  std::string token_;
  bool tls_ = false;
  absl::Status security_error_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// The exit code for an error status (docs/nmctl.md): INVALID_ARGUMENT 2, NOT_FOUND 3, anything else 1.
int ExitCodeFor(const absl::Status& status);

// The coordinator address: the flag if given, else $NMSPARSE_COORDINATOR, else 127.0.0.1:50151.
std::string ResolveCoordinatorAddress(const std::string& flag_value);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COORDINATOR_CONNECTION_H_
