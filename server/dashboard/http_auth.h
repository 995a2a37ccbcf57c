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

// Whether a form post comes from the dashboard's own pages (login CSRF; OWASP's origin check): its Origin,
// or its Referer when the browser sent no Origin, names the host the browser addressed - the Host header, or
// X-Forwarded-Host from a reverse proxy (a page cannot set either on a cross-site form) - over http or https
// (a TLS proxy in front). PermissionDenied naming what was sent otherwise, and when both are missing or
// Origin is "null" (browsers send Origin on every cross-site POST).
absl::Status CheckSameOrigin(absl::string_view origin, absl::string_view referer, absl::string_view host,
                             absl::string_view forwarded_host = "");

// The Set-Cookie value that holds a session's token: HttpOnly, SameSite=Strict, and Secure when the login
// page was served over TLS (its Origin, or Referer, is https).
std::string SessionCookie(absl::string_view token, absl::string_view origin, absl::string_view referer);

// The HTTP status of a refusal: 401, 403 or 503.
int HttpStatusOf(const absl::Status& status);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_HTTP_AUTH_H_
