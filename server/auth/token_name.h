// What a token's name may be. The name is shown wherever its holder's work is (nmctl's BY column, the
// dashboard, `nmserver token list`, refusals), so it is a plain identifier: no spaces, control characters,
// markup or look-alikes.
#ifndef NMSPARSE_SERVER_AUTH_TOKEN_NAME_H_
#define NMSPARSE_SERVER_AUTH_TOKEN_NAME_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace nmsparse::server {

// 1 to 64 of [A-Za-z0-9._-], beginning with a letter or a digit.
inline constexpr size_t kMaxTokenNameBytes = 64;

// InvalidArgument naming the value (as common/visible_text.h shows it) and the rule.
absl::Status CheckTokenName(const std::string& name);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_TOKEN_NAME_H_
