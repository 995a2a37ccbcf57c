#include "server/dashboard/http_auth.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace nmsparse::server {

std::string CookieValue(absl::string_view cookie_header, absl::string_view name) {
  for (absl::string_view part : absl::StrSplit(cookie_header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, name) && absl::ConsumePrefix(&part, "=")) return std::string(part);
  }
  return "";
}

absl::Status CheckDashboardRead(const TokenAuthenticator* authenticator, absl::string_view authorization,
                                absl::string_view cookie_header) {
  if (authenticator == nullptr) return absl::OkStatus();
  std::string header(authorization);
  if (header.empty()) {
    const std::string token = CookieValue(cookie_header, kTokenCookie);
    if (!token.empty()) header = absl::StrCat("Bearer ", token);
  }
  return authenticator->Authenticate(header, kDashboardReadMethod).status();
}

namespace {

// The page's origin as the browser sent it: Origin, else Referer.
absl::string_view SentOrigin(absl::string_view origin, absl::string_view referer) {
  return origin.empty() ? referer : origin;
}

// Whether `url` is http(s)://HOST itself or a path under it.
bool IsOnHost(absl::string_view url, absl::string_view host) {
  if (!absl::ConsumePrefix(&url, "https://") && !absl::ConsumePrefix(&url, "http://")) return false;
  if (!absl::StartsWithIgnoreCase(url, host)) return false;
  url.remove_prefix(host.size());
  return url.empty() || url.front() == '/';
}

}  // namespace

absl::Status CheckSameOrigin(absl::string_view origin, absl::string_view referer, absl::string_view host,
                             absl::string_view forwarded_host) {
  const absl::string_view sent = SentOrigin(origin, referer);
  for (absl::string_view h : {host, forwarded_host}) {
    if (!h.empty() && IsOnHost(sent, h)) return absl::OkStatus();
  }
  const std::string shown = absl::CHexEscape(sent.substr(0, 200));
  return absl::PermissionDeniedError(
      sent.empty()
          ? "login refused: the request names no Origin or Referer (is it from this dashboard's page?)"
          : absl::StrCat("login refused: the request comes from '", shown,
                         "', not from this dashboard's own page"));
}

std::string SessionCookie(absl::string_view token, absl::string_view origin, absl::string_view referer) {
  const bool tls = absl::StartsWith(SentOrigin(origin, referer), "https://");
  return absl::StrCat(kTokenCookie, "=", token, "; Path=/; HttpOnly; SameSite=Strict", tls ? "; Secure" : "");
}

int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    default:
      return 503;
  }
}

}  // namespace nmsparse::server
