// The token of an "Authorization" value, gRPC metadata or an HTTP header alike: the scheme "Bearer" in any
// case (scheme names are case-insensitive, RFC 7235 section 2.1), one or more spaces, then the token.
#ifndef NMSPARSE_SERVER_AUTH_BEARER_TOKEN_H_
#define NMSPARSE_SERVER_AUTH_BEARER_TOKEN_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace nmsparse::server {

// Nullopt for another scheme or no token.
std::optional<absl::string_view> BearerToken(absl::string_view authorization);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_BEARER_TOKEN_H_
