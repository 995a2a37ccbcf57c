#include "server/auth/role.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nmsparse::server {
namespace {

struct ServiceAccess {
  absl::string_view prefix;  // "/package.Service/"
  std::initializer_list<Role> roles;
};

// Who may call each service. A method of any other service is for admins only.
constexpr ServiceAccess kAccess[] = {
    {"/nmsparse.v1.WorkerGateway/", {Role::kWorker, Role::kAdmin}},
    {"/nmsparse.v1.Coordinator/", {Role::kUser, Role::kAdmin}},
};
constexpr std::initializer_list<Role> kAdminOnly = {Role::kAdmin};

std::initializer_list<Role> RolesFor(absl::string_view path) {
  for (const ServiceAccess& access : kAccess) {
    if (absl::StartsWith(path, access.prefix)) return access.roles;
  }
  return kAdminOnly;
}

}  // namespace

std::string RoleName(Role role) {
  switch (role) {
    case Role::kWorker:
      return "worker";
    case Role::kUser:
      return "user";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role r : {Role::kWorker, Role::kUser, Role::kAdmin}) {
    if (name == RoleName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("role: '", name, "' is not a role; use worker, user or admin"));
}

absl::Status CheckMayCall(Role role, absl::string_view path, absl::string_view who) {
  std::initializer_list<Role> allowed = RolesFor(path);
  if (std::find(allowed.begin(), allowed.end(), role) != allowed.end()) return absl::OkStatus();
  std::vector<std::string> names;
  for (Role r : allowed) names.push_back(RoleName(r));
  return absl::PermissionDeniedError(absl::StrCat("token '", who, "' has role ", RoleName(role),
                                                  ", which may not call ", path,
                                                  " (roles allowed: ", absl::StrJoin(names, ", "), ")"));
}

}  // namespace nmsparse::server
