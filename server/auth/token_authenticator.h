// The one check every call to an authenticated coordinator passes: gRPC runs this AuthMetadataProcessor on
// each call's metadata before any handler sees it. It reads "authorization: Bearer TOKEN" (bearer_token.h),
// looks the token's SHA-256 up in the tokens table, refuses unknown and expired tokens (UNAUTHENTICATED) and
// roles the method is not for (PERMISSION_DENIED, role.h), and records the caller's name and role for the
// services (caller.h). With mTLS for workers, a WorkerGateway call must also come over a connection with a
// verified client certificate. Error messages never contain the token.
//
// Why an AuthMetadataProcessor and not grpc::experimental::ServerInterceptor: in Debian's gRPC 1.51 a server
// interceptor cannot end a call before its handler runs (it may only rewrite the status afterwards), so a
// refused SubmitSweep would still be stored. The processor runs in gRPC's auth filter, before dispatch, and
// its status is the call's status. It needs secure server credentials: TLS, or gRPC's local credentials on
// loopback (transport_security.h).
#ifndef NMSPARSE_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
#define NMSPARSE_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_

#include <grpcpp/security/auth_metadata_processor.h>

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/auth/caller.h"
#include "server/store/store.h"

namespace nmsparse::server {

class TokenAuthenticator final : public grpc::AuthMetadataProcessor {
 public:
  // `now_ms` is the clock for expiry (tests pass their own).
  TokenAuthenticator(Store* store, bool require_worker_certificate, std::function<int64_t()> now_ms);

  // The check itself, without gRPC (the dashboard's HTTP requests pass it too): the caller of
  // `authorization` ("Bearer TOKEN") when its token is known, unexpired and its role may call the gRPC method
  // `path`. Unauthenticated, PermissionDenied or Unavailable otherwise; messages never contain the token.
  absl::StatusOr<Caller> Authenticate(absl::string_view authorization, absl::string_view path) const;

  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext* context, OutputMetadata* consumed,
                       OutputMetadata* response) override;

 private:
  Store* store_;
  bool require_worker_certificate_;
  std::function<int64_t()> now_ms_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_TOKEN_AUTHENTICATOR_H_
