#include "server/store/store.h"

#include <cstdio>
#include <string>

#include "common/status_macros.h"
#include "server/store/clock.h"
#include "server/store/migrations.h"

namespace nmsparse::server {

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  NM_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path));
  // A damaged file is refused here, naming it, rather than found by whichever request reads the bad page.
  NM_RETURN_IF_ERROR(db->QuickCheck());
  NM_RETURN_IF_ERROR(Migrate(db.get()).status());
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

absl::Status Store::Write(absl::FunctionRef<absl::Status(Database*)> fn) {
  absl::MutexLock lock(&mu_);
  absl::Status status = WriteLocked(fn);
  NoteWrite(status);
  NoteFailure(status);
  return status;
}

void Store::NoteFailure(const absl::Status& status) {
  const std::string sql = SqlOf(status);
  if (sql.empty() || IsStorageFailure(status)) return;  // Not a statement of ours, or NoteWrite's.
  std::fprintf(stderr, "nmserver: database %s: %s: %s (statement: %s)\n", db_->path().c_str(),
               absl::StatusCodeToString(status.code()).c_str(), std::string(status.message()).c_str(),
               sql.c_str());
}

absl::Status Store::WriteLocked(absl::FunctionRef<absl::Status(Database*)> fn) {
  Transaction tx(db_.get());
  NM_RETURN_IF_ERROR(tx.Begin());
  NM_RETURN_IF_ERROR(fn(db_.get()));
  return tx.Commit();
}

void Store::NoteWrite(const absl::Status& status) {
  const int64_t now = NowMs();
  if (IsStorageFailure(status)) {
    last_storage_failure_ms_ = now;
    if (outage_failures_++ == 0) {
      outage_started_ms_ = now;
      std::fprintf(stderr,
                   "nmserver: writes to the database %s fail: %s; requests that write are answered %s "
                   "(workers keep their reports and retry) until a write succeeds again\n",
                   db_->path().c_str(), std::string(status.message()).c_str(),
                   absl::StatusCodeToString(status.code()).c_str());
    }
  } else if (status.ok() && outage_failures_ > 0) {
    std::fprintf(stderr, "nmserver: database writes succeed again, after %lld failed in %.1f s\n",
                 static_cast<long long>(outage_failures_), (now - outage_started_ms_) / 1000.0);
    outage_failures_ = 0;
  }
}

absl::Status Store::Read(absl::FunctionRef<absl::Status(Database*)> fn) {
  absl::MutexLock lock(&mu_);
  absl::Status status = fn(db_.get());
  NoteFailure(status);
  return status;
}

}  // namespace nmsparse::server
