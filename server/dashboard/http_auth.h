// Who may read the dashboard: the same token check as the gRPC API (TokenAuthenticator, role.h), with the
// token from "Authorization: Bearer TOKEN" or, for a browser, the nmsparse_token cookie that /login sets.
// Without an authenticator (loopback without tokens, as the gRPC API) every request may read.
#ifndef NMSPARSE_SERVER_DASHBOARD_HTTP_AUTH_H_
#define NMSPARSE_SERVER_DASHBOARD_HTTP_AUTH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/auth/token_authenticator.h"

namespace nmsparse::server {

inline constexpr char kTokenCookie[] = "nmsparse_token";

// The gRPC method whose role rule the dashboard's reads follow (users and admins; not workers).
inline constexpr char kDashboardReadMethod[] = "/nmsparse.v1.Coordinator/GetRun";

// The value of cookie `name` in a Cookie header ("a=1; nmsparse_token=..."), or "".
std::string CookieValue(absl::string_view cookie_header, absl::string_view name);

// OK, or Unauthenticated / PermissionDenied / Unavailable from the authenticator (never naming the token).
absl::Status CheckDashboardRead(const TokenAuthenticator* authenticator, absl::string_view authorization,
                                absl::string_view cookie_header);

// The HTTP status of a refusal: 401, 403 or 503.
int HttpStatusOf(const absl::Status& status);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_HTTP_AUTH_H_
