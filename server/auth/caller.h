// Who made a call: the token's name and role, as the authenticator (token_authenticator.h) put them in the
// call's AuthContext. On a coordinator without tokens every caller is an anonymous admin, as before
// authentication existed.
#ifndef NMSPARSE_SERVER_AUTH_CALLER_H_
#define NMSPARSE_SERVER_AUTH_CALLER_H_

#include <string>

#include "absl/status/status.h"
#include "server/auth/role.h"
#include "server/store/sweep_table.h"

namespace grpc {
class AuthContext;
class ServerContext;
}  // namespace grpc

namespace nmsparse::server {

// AuthContext property names: set by the authenticator, read by CallerOf.
inline constexpr char kCallerNameProperty[] = "nmsparse.caller";
inline constexpr char kCallerRoleProperty[] = "nmsparse.role";
inline constexpr char kCallerTokenProperty[] = "nmsparse.token_sha256";

struct Caller {
  std::string name;  // "" when the coordinator has no tokens.
  Role role = Role::kAdmin;
  std::string token_sha256;  // Who the caller is: the SHA-256 of its token ("" without tokens).
};

Caller CallerOf(const grpc::AuthContext& auth);
Caller CallerOf(const grpc::ServerContext* context);

// The owner of what `caller` submits.
SweepOwner OwnerOf(const Caller& caller);

// OK when `caller` may cancel what `owner` submitted: admins any, users their own, by token (a name revoked
// and re-added for someone else is a new owner). PermissionDenied names both.
absl::Status CheckMayCancel(const Caller& caller, const SweepOwner& owner, const std::string& what);
// The same rule for any change to a run or sweep: `action` ("resume", "fork") words the refusal.
absl::Status CheckMayChange(const Caller& caller, const std::string& action, const SweepOwner& owner,
                            const std::string& what);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_CALLER_H_
