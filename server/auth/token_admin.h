// nmserver's credential commands, run against the database file (the coordinator may be running: a token
// added or revoked takes effect on its next call; authentication itself turns on at the first start after
// `init`):
//   nmserver init --db DB --token_dir DIR       the first tokens: DIR/admin.token (admin), DIR/worker.token
//   nmserver token add NAME --role R --token_file FILE [--expires_in_s N]
//   nmserver token list                         names, roles, creation and expiry (never the tokens)
//   nmserver token revoke NAME
// A token is written once, to a new file of mode 0600, and stored only as its SHA-256.
#ifndef NMSPARSE_SERVER_AUTH_TOKEN_ADMIN_H_
#define NMSPARSE_SERVER_AUTH_TOKEN_ADMIN_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nmsparse::server {

struct TokenAdminFlags {
  std::string db_path;
  std::string token_dir;     // init
  std::string token_file;    // token add
  std::string role;          // token add
  int64_t expires_in_s = 0;  // token add; 0: never expires.
};

// Whether `args` (positional arguments without the program name) name a credential command.
bool IsTokenAdminCommand(const std::vector<std::string>& args);

// Runs it; messages go to `out` and `err` (prefixed "nmserver: "). Returns the exit code: 0 ok, 1 on a
// database or file error, 2 on a usage error.
int RunTokenAdmin(const std::vector<std::string>& args, const TokenAdminFlags& flags, std::ostream& out,
                  std::ostream& err);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_AUTH_TOKEN_ADMIN_H_
