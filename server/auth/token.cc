#include "server/auth/token.h"

#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace nmsparse::server {

absl::StatusOr<std::string> NewSecret(const std::string& prefix) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return absl::InternalError("OpenSSL RAND_bytes failed");
  return absl::StrCat(
      prefix, absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes))));
}

absl::StatusOr<std::string> NewToken() { return NewSecret("nmt_"); }

}  // namespace nmsparse::server
