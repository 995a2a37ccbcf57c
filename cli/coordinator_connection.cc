#include "cli/coordinator_connection.h"

#include <grpcpp/grpcpp.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/nmctl_exit_codes.h"
#include "common/coordinator_address.h"
#include "common/coordinator_answer.h"
#include "common/version.h"
#include "schemas/limits.h"

namespace nmsparse::cli {

CoordinatorConnection::CoordinatorConnection(std::string address, const ClientSecurityFlags& security)
    : address_(std::move(address)) {
  absl::StatusOr<ClientSecurity> resolved = ResolveClientSecurity(security);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (resolved.ok()) {
    token_ = resolved->token;
    tls_ = resolved->tls;
    credentials = resolved->credentials;
  } else {
    security_error_ = resolved.status();
  }
  // The coordinator's own bounds (docs/reliability.md): a larger request is refused here, before sending.
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(limits::kMaxRequestBytes);
  args.SetMaxReceiveMessageSize(limits::kMaxResponseBytes);
  stub_ = v1::Coordinator::NewStub(grpc::CreateCustomChannel(address_, credentials, args));
}

std::unique_ptr<grpc::ClientContext> CoordinatorConnection::Context(bool streaming) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!streaming) context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  AttachToken(token_, context.get());
  context->AddMetadata(kWireVersionMetadata, std::to_string(kWireVersion));
  return context;
}

absl::Status CoordinatorConnection::Check(const grpc::ClientContext& context,
                                          const grpc::Status& status) const {
  switch (status.error_code()) {  // No answer from nmserver's handlers to read its version from.
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::CANCELLED:
      return Check(status);
    default:
      break;
  }
  const auto& metadata = context.GetServerInitialMetadata();
  int version = 1;  // Wire version 1's nmserver sent none.
  if (auto it = metadata.find(kWireVersionMetadata); it != metadata.end()) {
    if (!absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &version)) version = 0;
  }
  if (version != kWireVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("the coordinator at ", address_, ": ", WireVersionMismatch(kWireVersion, version)));
  }
  return Check(status);
}

absl::Status CoordinatorConnection::Check(const grpc::Status& status) const {
  if (!security_error_.ok()) return security_error_;
  if (status.ok()) return absl::OkStatus();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE &&
      status.error_details() == kCoordinatorAnswerMark) {
    return absl::UnavailableError(absl::StrCat("the coordinator at ", address_, " could not do it now: ",
                                               status.error_message(), "; nothing was changed, try again"));
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    // A TLS mismatch shows only as a failed connection: say which side to look at.
    const bool verify_failed = status.error_message().find("certificate verify failed") != std::string::npos;
    const char* hint = verify_failed
                           ? "; its certificate is not signed by the CA of --tls-ca ($NMSPARSE_TLS_CA)"
                       : tls_ ? ""
                              : "; if it serves TLS, give --tls-ca or NMSPARSE_TLS_CA";
    return absl::UnavailableError(
        absl::StrCat("cannot reach the coordinator at ", address_, " (", status.error_message(),
                     "); is nmserver running? Use --coordinator or ", "NMSPARSE_COORDINATOR", hint));
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    default:
      return kExitServerError;
  }
}

std::string ResolveCoordinatorAddress(const std::string& flag_value) {
  if (!flag_value.empty()) return WithDefaultPort(flag_value);
  const char* env = std::getenv("NMSPARSE_COORDINATOR");
  if (env != nullptr && *env != '\0') return WithDefaultPort(env);
  return DefaultCoordinatorAddress();
}

}  // namespace nmsparse::cli
