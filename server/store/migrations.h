// The database schema as an ordered list of migrations. Each migration runs once, in one transaction, and
// bumps schema_version; running Migrate again on an up-to-date database changes nothing.
#ifndef NMSPARSE_SERVER_STORE_MIGRATIONS_H_
#define NMSPARSE_SERVER_STORE_MIGRATIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// Migration i (0-based) brings the schema from version i to version i + 1.
const std::vector<std::string>& Migrations();

// Applies the pending migrations; returns the resulting schema version. A database newer than this binary
// (more versions than it knows) is refused rather than guessed at.
absl::StatusOr<int> Migrate(Database* db);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_MIGRATIONS_H_
