// Who made a call: the token's name and role, as the authenticator (token_authenticator.h) put them in the
// call's AuthContext. On a coordinator without tokens every caller is an anonymous admin, as before
// authentication existed.
#ifndef NMSPARSE_SERVER_AUTH_CALLER_H_
#define NMSPARSE_SERVER_AUTH_CALLER_H_

#include <string>

#include "absl/status/status.h"
#include "server/auth/role.h"

namespace grpc {
class AuthContext;
class ServerContext;
}  // namespace grpc

namespace nmsparse::server {

// AuthContext property names: set by the authenticator, read by CallerOf.
inline constexpr char kCallerNameProperty[] = "nmsparse.caller";
inline constexpr char kCallerRoleProperty[] = "nmsparse.role";

struct Caller {
  std::string name;  // "" when the coordinator has no tokens.
  Role role = Role::kAdmin;
};

Caller CallerOf(const grpc::AuthContext& auth);
Caller CallerOf(const grpc::ServerContext* context);

// OK when `caller` may cancel a sweep that `owner` submitted: admins any, users their own. PermissionDenied
// names both.
absl::Status CheckMayCancel(const Caller& caller, const std::string& owner, const std::string& what);
// The same rule for any change to a run or sweep: `action` ("resume", "fork") words the refusal.
absl::Status CheckMayChange(const Caller& caller, const std::string& action, const std::string& owner,
                            const std::string& what);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_CALLER_H_
