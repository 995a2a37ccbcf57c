// A thin RAII wrapper over SQLite: one connection, prepared statements with typed binds and columns, and a
// transaction guard. Callers serialise access to a Database themselves (see Store).
#ifndef NMSPARSE_SERVER_STORE_SQLITE_H_
#define NMSPARSE_SERVER_STORE_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace nmsparse::server {

class Statement;

// Storage failures - a full disk (SQLITE_FULL), an I/O error, a lock held past the busy timeout, no memory, a
// read-only or vanished file - are transient: the same request succeeds once space, the lock or the file is
// back. They come back as RESOURCE_EXHAUSTED (full) or UNAVAILABLE, the codes clients retry with back-off,
// and carry a payload that IsStorageFailure recognises. Every other SQLite error (a constraint, a bad
// statement) is INTERNAL, a damaged file DATA_LOSS.
// No status carries the statement's text (answers reach clients): it rides as a payload, which SqlOf reads
// for nmserver's log.
absl::Status SqliteError(int rc, absl::string_view message);
bool IsStorageFailure(const absl::Status& status);
std::string SqlOf(const absl::Status& status);

// Returns a cached statement to its ready state (reset, unbound) when the caller is done with it, so that no
// half-read SELECT keeps a read transaction open.
struct StatementResetter {
  void operator()(Statement* s) const;
};
using Stmt = std::unique_ptr<Statement, StatementResetter>;

class Database {
 public:
  // Opens (creating if needed) the file with WAL, foreign keys, synchronous=NORMAL and a busy timeout.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements without results.
  absl::Status Exec(absl::string_view sql);
  // Compiles one statement; cached, so repeated calls with the same text reuse it. A statement must not be
  // prepared again while an earlier handle of the same text is still in use.
  absl::StatusOr<Stmt> Prepare(absl::string_view sql);
  int64_t LastInsertId() const;
  int Changes() const;
  const std::string& path() const { return path_; }

  // `what` failed with SQLite result code `rc`: SqliteError with SQLite's message, and `sql` as its payload.
  absl::Status Error(int rc, absl::string_view what, absl::string_view sql = "") const;

  // PRAGMA quick_check: OK, or DataLoss naming the file and what SQLite found (the first few problems). It
  // reads every page (b-trees, free list), without the index-to-table cross-check of integrity_check.
  absl::Status QuickCheck();

 private:
  Database(sqlite3* db, std::string path);
  sqlite3* db_;
  std::string path_;
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

// A cached prepared statement. Bind indices are 1-based as in SQLite; columns are 0-based.
class Statement {
 public:
  Statement(Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, int64_t v);
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, uint32_t v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, double v);
  Statement& BindText(int i, absl::string_view v);
  Statement& BindBlob(int i, absl::string_view v);
  Statement& BindNull(int i);

  // Advances: true with a row, false when done.
  absl::StatusOr<bool> Step();
  // Runs a statement that returns no rows.
  absl::Status Run();
  // Resets for reuse and clears bindings.
  void Reset();

  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;

 private:
  Database* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Database* db) : db_(db) {}
  ~Transaction();
  absl::Status Begin();
  absl::Status Commit();

 private:
  Database* db_;
  bool open_ = false;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_SQLITE_H_
