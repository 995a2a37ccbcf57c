#include "server/auth/bearer_token.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace nmsparse::server {

std::optional<absl::string_view> BearerToken(absl::string_view authorization) {
  constexpr absl::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  absl::string_view token = absl::StripLeadingAsciiWhitespace(authorization.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return token;
}

}  // namespace nmsparse::server
