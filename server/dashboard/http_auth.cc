#include "server/dashboard/http_auth.h"

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
