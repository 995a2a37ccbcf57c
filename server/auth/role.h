// The three roles a token can have, and which gRPC methods each may call. This table is the one place that
// says who may call what; the authenticator (token_authenticator.h) applies it to every call.
#ifndef NMSPARSE_SERVER_AUTH_ROLE_H_
#define NMSPARSE_SERVER_AUTH_ROLE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nmsparse::server {

enum class Role {
  kWorker,  // nmworker: the WorkerGateway only.
  kUser,    // People: the Coordinator (submit, read everything, cancel their own sweeps and runs).
  kAdmin,   // Everything, including cancelling anyone's sweeps.
};

std::string RoleName(Role role);
// InvalidArgument names the value and the three roles.
absl::StatusOr<Role> ParseRole(absl::string_view name);

// OK when `role` may call the gRPC method `path` ("/nmsparse.v1.Coordinator/SubmitSweep"); PermissionDenied
// naming `who`, the role, the method and the roles that may call it otherwise.
absl::Status CheckMayCall(Role role, absl::string_view path, absl::string_view who);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_ROLE_H_
