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
  caller.token_sha256 = Property(auth, kCallerTokenProperty);
  absl::StatusOr<Role> role = ParseRole(Property(auth, kCallerRoleProperty));
  // Without the properties there was no authenticator: a coordinator without tokens.
  if (role.ok()) caller.role = *role;
  return caller;
}

Caller CallerOf(const grpc::ServerContext* context) {
  std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
  return auth ? CallerOf(*auth) : Caller{};
}

SweepOwner OwnerOf(const Caller& caller) { return SweepOwner{caller.name, caller.token_sha256}; }

absl::Status CheckMayCancel(const Caller& caller, const SweepOwner& owner, const std::string& what) {
  return CheckMayChange(caller, "cancel", owner, what);
}

absl::Status CheckMayChange(const Caller& caller, const std::string& action, const SweepOwner& owner,
                            const std::string& what) {
  if (caller.role == Role::kAdmin) return absl::OkStatus();
  if (!caller.token_sha256.empty() && caller.token_sha256 == owner.token_sha256) return absl::OkStatus();
  const std::string whose = caller.name == owner.name ? absl::StrCat("an earlier holder of the name '",
                                                                     owner.name, "' (another token)")
                                                      : absl::StrCat("'", owner.name, "'");
  return absl::PermissionDeniedError(
      absl::StrCat("'", caller.name, "' may not ", action, " ", what, ", submitted by ", whose, ": users ",
                   action, " their own sweeps and runs only (role ", RoleName(caller.role), ")"));
}

}  // namespace nmsparse::server
