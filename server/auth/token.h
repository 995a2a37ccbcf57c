// Access tokens: random secrets made here and kept by their holders; the coordinator knows each only by its
// SHA-256 (schemas/content_hash.h), so a copied database gives no token away.
#ifndef NMSPARSE_SERVER_AUTH_TOKEN_H_
#define NMSPARSE_SERVER_AUTH_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse::server {

// `prefix` and 64 hex digits: 256 bits from OpenSSL's RAND_bytes. Internal when the random source fails.
absl::StatusOr<std::string> NewSecret(const std::string& prefix);
// An access token: "nmt_" and a secret.
absl::StatusOr<std::string> NewToken();

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_TOKEN_H_
