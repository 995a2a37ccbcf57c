// Rows of the tokens table: named access tokens with a role, stored as the SHA-256 of the token only (the
// token itself is shown once, when it is made). Callers hold the Store lock (Store::Read / Store::Write).
#ifndef NMSPARSE_SERVER_STORE_TOKEN_TABLE_H_
#define NMSPARSE_SERVER_STORE_TOKEN_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

struct TokenRecord {
  std::string name;  // Who holds it: recorded as the submitter of their sweeps.
  std::string role;  // worker | user | admin (server/auth/role.h).
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;  // 0: never.
};

// AlreadyExists names a taken name.
absl::Status InsertToken(Database* db, const TokenRecord& token, const std::string& sha256_hex);
// The token whose hash is `sha256_hex`, if any.
absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(Database* db, const std::string& sha256_hex);
// By name.
absl::StatusOr<std::vector<TokenRecord>> ListTokens(Database* db);
// NotFound names an unknown name.
absl::Status DeleteToken(Database* db, const std::string& name);
// Whether any token exists: authentication is on from the first one.
absl::StatusOr<bool> HasTokens(Database* db);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_TOKEN_TABLE_H_
