#include "server/auth/caller.h"

#include <grpcpp/security/auth_context.h>
#include <grpcpp/server_context.h>

#include "absl/strings/str_cat.h"

namespace nmsparse::server {
namespace {

std::string Property(const grpc::AuthContext& auth, const char* name) {
  std::vector<grpc::string_ref> values = auth.FindPropertyValues(name);
  return values.empty() ? "" : std::string(values[0].data(), values[0].size());
}

}  // namespace

Caller CallerOf(const grpc::AuthContext& auth) {
  Caller caller;
  caller.name = Property(auth, kCallerNameProperty);
  absl::StatusOr<Role> role = ParseRole(Property(auth, kCallerRoleProperty));
  // Without the properties there was no authenticator: a coordinator without tokens.
  if (role.ok()) caller.role = *role;
  return caller;
}

Caller CallerOf(const grpc::ServerContext* context) {
  std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
  return auth ? CallerOf(*auth) : Caller{};
}

absl::Status CheckMayCancel(const Caller& caller, const std::string& owner, const std::string& what) {
  return CheckMayChange(caller, "cancel", owner, what);
}

absl::Status CheckMayChange(const Caller& caller, const std::string& action, const std::string& owner,
                            const std::string& what) {
  if (caller.role == Role::kAdmin || caller.name == owner) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("'", caller.name, "' may not ", action, " ", what, ", submitted by '", owner, "': users ",
                   action, " their own sweeps and runs only (role ", RoleName(caller.role), ")"));
}

}  // namespace nmsparse::server
