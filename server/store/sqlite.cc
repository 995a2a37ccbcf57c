#include "server/store/sqlite.h"

#include <sqlite3.h>

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"

namespace nmsparse::server {

namespace {

constexpr char kStorageFailureUrl[] = "nmsparse/storage-failure";
constexpr char kSqlUrl[] = "nmsparse/sql";
constexpr size_t kMaxSqlChars = 200;  // Of a statement, in the log.
constexpr int kMaxProblems = 5;       // Of quick_check's, in a refusal.

absl::Status WithSql(absl::Status status, absl::string_view sql) {
  if (!sql.empty()) status.SetPayload(kSqlUrl, absl::Cord(sql.substr(0, kMaxSqlChars)));
  return status;
}

absl::StatusCode CodeForSqlite(int rc) {
  switch (rc & 0xff) {  // The primary code of an extended one.
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status SqliteError(int rc, absl::string_view message) {
  const absl::StatusCode code = CodeForSqlite(rc);
  absl::Status status(code, message);
  if (code == absl::StatusCode::kResourceExhausted || code == absl::StatusCode::kUnavailable) {
    status.SetPayload(kStorageFailureUrl, absl::Cord(sqlite3_errstr(rc)));
  }
  return status;
}

bool IsStorageFailure(const absl::Status& status) {
  return status.GetPayload(kStorageFailureUrl).has_value();
}

std::string SqlOf(const absl::Status& status) {
  const auto sql = status.GetPayload(kSqlUrl);
  return sql ? std::string(*sql) : std::string();
}

struct Database::Cache {
  std::map<std::string, std::unique_ptr<Statement>, std::less<>> statements;
};

Database::Database(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), cache_(std::make_unique<Cache>()) {}

Database::~Database() {
  cache_.reset();  // Finalise statements before closing.
  sqlite3_close(db_);
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return absl::UnavailableError(absl::StrCat("cannot open database ", path, ": ", msg));
  }
  std::unique_ptr<Database> db(new Database(raw, path));
  sqlite3_busy_timeout(raw, 5000);
  absl::Status s = db->Exec(
      "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; PRAGMA "
      "temp_store=MEMORY;");
  if (!s.ok())
    return absl::UnavailableError(absl::StrCat("cannot configure database ", path, ": ", s.message()));
  return db;
}

absl::Status Database::Error(int rc, absl::string_view what, absl::string_view sql) const {
  // No file path and no statement: these messages reach clients; nmserver's log names both (Store).
  return WithSql(SqliteError(rc, absl::StrCat(what, ": ", sqlite3_errmsg(db_))), sql);
}

absl::Status Database::QuickCheck() {
  const std::string sql = absl::StrCat("PRAGMA quick_check(", kMaxProblems, ")");
  absl::StatusOr<Stmt> st = Prepare(sql);
  std::vector<std::string> problems;
  absl::StatusOr<bool> row = st.ok() ? (*st)->Step() : st.status();
  for (; row.ok() && *row; row = (*st)->Step()) {
    problems.push_back(absl::StrReplaceAll((*st)->Text(0), {{"\n", " "}}));
  }
  if (!row.ok()) problems.push_back(std::string(row.status().message()));
  if (problems.size() == 1 && problems[0] == "ok") return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "database ", path_, " is damaged (PRAGMA quick_check: ", absl::StrJoin(problems, "; "),
      "); restore a copy of it, or salvage its rows into a new file (sqlite3 ", path_, " .recover)"));
}

absl::Status Database::Exec(absl::string_view sql) {
  char* err = nullptr;
  std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return WithSql(SqliteError(rc, absl::StrCat("sqlite: ", msg)), text);
  }
  return absl::OkStatus();
}

void StatementResetter::operator()(Statement* s) const { s->Reset(); }

absl::StatusOr<Stmt> Database::Prepare(absl::string_view sql) {
  auto it = cache_->statements.find(sql);
  if (it != cache_->statements.end()) return Stmt(it->second.get());
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return Error(rc, "prepare", sql);
  auto owned = std::make_unique<Statement>(this, stmt);
  Stmt out(owned.get());
  cache_->statements.emplace(std::string(sql), std::move(owned));
  return out;
}

int64_t Database::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
int Database::Changes() const { return sqlite3_changes(db_); }

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Statement& Statement::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Statement& Statement::BindText(int i, absl::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindBlob(int i, absl::string_view v) {
  sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, "step", sqlite3_sql(stmt_));
}

absl::Status Statement::Run() { return Step().status(); }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::Double(int col) const { return sqlite3_column_double(stmt_, col); }
bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::string Statement::Text(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), n) : std::string();
}

Transaction::~Transaction() {
  if (open_) db_->Exec("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Begin() {
  absl::Status s = db_->Exec("BEGIN IMMEDIATE");
  open_ = s.ok();
  return s;
}

absl::Status Transaction::Commit() {
  absl::Status s = db_->Exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace nmsparse::server
