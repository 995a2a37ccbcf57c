// Worker sessions: the secret a Register returns, which binds a worker id to the one nmworker process that
// registered it. Every later WorkerGateway call presents it (contract/worker_session.h), so that a holder of
// the shared worker token cannot report, complete, heartbeat or leave for another worker, nor take over its
// id while its lease holds (docs/security.md, "Workers"). The coordinator keeps only each session's SHA-256.
#ifndef NMSPARSE_SERVER_AUTH_WORKER_SESSION_H_
#define NMSPARSE_SERVER_AUTH_WORKER_SESSION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/store/sqlite.h"

namespace grpc {
class ServerContext;
}  // namespace grpc

namespace nmsparse::server {

// A fresh session: "nms_" and 256 random bits in hex.
absl::StatusOr<std::string> NewWorkerSession();

// The session the call presents ("" when none).
std::string PresentedWorkerSession(const grpc::ServerContext* ctx);

// OK when the call presents the session of worker `worker_id`; PermissionDenied naming `what` (e.g. "run 5
// attempt 1") and the worker otherwise, Unauthenticated when the call presents no session at all.
absl::Status CheckWorkerSession(Database* db, const grpc::ServerContext* ctx, int64_t worker_id,
                                absl::string_view what);

// How a Register of `requested_id` (0: a new worker) is bound, given the session it presents.
struct RegistrationBinding {
  int64_t worker_id = 0;    // The id to update (0: insert a new worker).
  std::string new_session;  // Issued to the caller ("": it keeps the session it presented).
};
// A new worker, or an unknown id, gets a new session; a known id is the caller's with its session, or when
// the worker's lease has expired (or it predates sessions); a live worker's id with another session is
// refused with PermissionDenied.
absl::StatusOr<RegistrationBinding> BindRegistration(Database* db, int64_t requested_id,
                                                     const std::string& presented_session);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_WORKER_SESSION_H_
