#include "server/auth/token_admin.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "schemas/content_hash.h"
#include "server/auth/role.h"
#include "server/auth/token.h"
#include "server/auth/token_name.h"
#include "server/store/clock.h"
#include "server/store/store.h"
#include "server/store/token_table.h"

namespace nmsparse::server {
namespace {

// A new file of mode 0600 holding `token`; never overwrites one.
absl::Status WriteTokenFile(const std::string& path, const std::string& token) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": ", std::strerror(errno), errno == EEXIST ? " (a token file is never overwritten)" : ""));
  }
  const std::string text = token + "\n";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed) {
    unlink(path.c_str());
    return absl::InternalError(absl::StrCat(path, ": cannot write the token"));
  }
  return absl::OkStatus();
}

// One token: the row and its file in one transaction (a failed file write stores nothing).
absl::Status AddToken(Store* store, const std::string& name, Role role, int64_t expires_in_s,
                      const std::string& path) {
  if (name.empty()) return absl::InvalidArgumentError("token add: give the token's NAME");
  NM_RETURN_IF_ERROR(CheckTokenName(name));
  NM_ASSIGN_OR_RETURN(std::string token, NewToken());
  TokenRecord record;
  record.name = name;
  record.role = RoleName(role);
  record.created_at_ms = NowMs();
  record.expires_at_ms = expires_in_s > 0 ? record.created_at_ms + expires_in_s * 1000 : 0;
  return store->Write([&](Database* db) -> absl::Status {
    NM_RETURN_IF_ERROR(InsertToken(db, record, Sha256Hex(token)));
    return WriteTokenFile(path, token);
  });
}

std::string FormatMs(int64_t ms) {
  return ms == 0 ? "never"
                 : absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

// The token directory, created 0700 (parents as needed) when missing: only its owner lists the tokens.
absl::Status MakeTokenDir(const std::string& dir) {
  std::error_code error;
  if (std::filesystem::is_directory(dir, error)) return absl::OkStatus();
  if (!std::filesystem::create_directories(dir, error) || error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--token_dir ", dir, ": cannot create it: ", error ? error.message() : "not a directory"));
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, error);
  if (error) return absl::InternalError(absl::StrCat("--token_dir ", dir, ": chmod 0700: ", error.message()));
  return absl::OkStatus();
}

absl::Status Init(Store* store, const TokenAdminFlags& flags, std::ostream& out) {
  if (flags.token_dir.empty())
    return absl::InvalidArgumentError("init: give --token_dir DIR for the token files");
  bool has = false;
  NM_RETURN_IF_ERROR(store->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(has, HasTokens(db));
    return absl::OkStatus();
  }));
  if (has) {
    return absl::FailedPreconditionError(
        absl::StrCat(flags.db_path, " has tokens already; use nmserver token add/list/revoke"));
  }
  NM_RETURN_IF_ERROR(MakeTokenDir(flags.token_dir));
  for (Role role : {Role::kAdmin, Role::kWorker}) {
    const std::string path = absl::StrCat(flags.token_dir, "/", RoleName(role), ".token");
    NM_RETURN_IF_ERROR(AddToken(store, RoleName(role), role, 0, path));
    out << "token '" << RoleName(role) << "' (role " << RoleName(role) << ") written to " << path << "\n";
  }
  out << "authentication is on for " << flags.db_path
      << " from nmserver's next start; add user tokens with: nmserver token add NAME --role user "
         "--token_file "
         "FILE\n";
  return absl::OkStatus();
}

absl::Status List(Store* store, std::ostream& out) {
  return store->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<TokenRecord> tokens, ListTokens(db));
    out << "NAME\tROLE\tCREATED\tEXPIRES\n";
    for (const TokenRecord& t : tokens) {
      out << VisibleText(t.name) << "\t" << t.role << "\t" << FormatMs(t.created_at_ms) << "\t"
          << FormatMs(t.expires_at_ms) << "\n";
    }
    return absl::OkStatus();
  });
}

absl::Status Run(Store* store, const std::vector<std::string>& args, const TokenAdminFlags& flags,
                 std::ostream& out) {
  if (args[0] == "init") {
    if (args.size() != 1) return absl::InvalidArgumentError("init takes no argument (see nmserver --help)");
    return Init(store, flags, out);
  }
  const std::string verb = args.size() > 1 ? args[1] : "";
  const std::string name = args.size() > 2 ? args[2] : "";
  if (verb == "list" && args.size() == 2) return List(store, out);
  if (verb == "revoke" && args.size() == 3) {
    NM_RETURN_IF_ERROR(store->Write([&](Database* db) { return DeleteToken(db, name); }));
    out << "token '" << VisibleText(name) << "' revoked\n";
    return absl::OkStatus();
  }
  if (verb == "add" && args.size() == 3) {
    NM_ASSIGN_OR_RETURN(Role role, ParseRole(flags.role));
    if (flags.token_file.empty()) return absl::InvalidArgumentError("token add: give --token_file FILE");
    if (flags.expires_in_s < 0) return absl::InvalidArgumentError("--expires_in_s: must be >= 0");
    NM_RETURN_IF_ERROR(AddToken(store, name, role, flags.expires_in_s, flags.token_file));
    out << "token '" << name << "' (role " << RoleName(role) << ") written to " << flags.token_file << "\n";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "usage: nmserver token add NAME --role worker|user|admin --token_file FILE [--expires_in_s N] | "
      "nmserver token list | nmserver token revoke NAME");
}

}  // namespace

bool IsTokenAdminCommand(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "init" || args[0] == "token");
}

int RunTokenAdmin(const std::vector<std::string>& args, const TokenAdminFlags& flags, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(flags.db_path);
  absl::Status status = store.ok() ? Run(store->get(), args, flags, out) : store.status();
  if (status.ok()) return 0;
  err << "nmserver: " << VisibleLines(std::string(status.message())) << "\n";
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace nmsparse::server
