#include "server/store/token_table.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace nmsparse::server {
namespace {

constexpr char kColumns[] = "name, role, created_at_ms, expires_at_ms";

TokenRecord TokenFromRow(const Statement& st) {
  return TokenRecord{st.Text(0), st.Text(1), st.Int(2), st.Int(3)};
}

}  // namespace

absl::Status InsertToken(Database* db, const TokenRecord& token, const std::string& sha256_hex) {
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT 1 FROM tokens WHERE name = ?"));
    st->BindText(1, token.name);
    NM_ASSIGN_OR_RETURN(bool taken, st->Step());
    if (taken) {
      return absl::AlreadyExistsError(
          absl::StrCat("a token named '", token.name, "' exists already (nmserver token revoke it first)"));
    }
  }
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("INSERT INTO tokens (name, role, token_sha256, created_at_ms, "
                                           "expires_at_ms) VALUES (?, ?, ?, ?, ?)"));
  return st->BindText(1, token.name)
      .BindText(2, token.role)
      .BindText(3, sha256_hex)
      .Bind(4, token.created_at_ms)
      .Bind(5, token.expires_at_ms)
      .Run();
}

absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(Database* db, const std::string& sha256_hex) {
  NM_ASSIGN_OR_RETURN(Stmt st,
                      db->Prepare(absl::StrCat("SELECT ", kColumns, " FROM tokens WHERE token_sha256 = ?")));
  st->BindText(1, sha256_hex);
  NM_ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<TokenRecord>();
  return std::optional<TokenRecord>(TokenFromRow(*st));
}

absl::StatusOr<std::vector<TokenRecord>> ListTokens(Database* db) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare(absl::StrCat("SELECT ", kColumns, " FROM tokens ORDER BY name")));
  std::vector<TokenRecord> out;
  while (true) {
    NM_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return out;
    out.push_back(TokenFromRow(*st));
  }
}

absl::Status DeleteToken(Database* db, const std::string& name) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("DELETE FROM tokens WHERE name = ?"));
  NM_RETURN_IF_ERROR(st->BindText(1, name).Run());
  if (db->Changes() == 0) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
  return absl::OkStatus();
}

absl::StatusOr<bool> HasTokens(Database* db) {
  NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT 1 FROM tokens LIMIT 1"));
  return st->Step();
}

}  // namespace nmsparse::server
