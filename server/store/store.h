// The coordinator's database: one SQLite connection behind a lock. Every write is one IMMEDIATE transaction
// (all of it or nothing); reads run under the same lock so they see whole transactions only.
#ifndef NMSPARSE_SERVER_STORE_STORE_H_
#define NMSPARSE_SERVER_STORE_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

class Store {
 public:
  // Opens the file, checks it (Database::QuickCheck: DataLoss naming the file), and applies pending
  // migrations.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);

  // Runs `fn` in one transaction; commits when it returns OK, rolls back otherwise (and returns its status).
  // A storage failure (IsStorageFailure: disk full, I/O error...) is remembered, and nmserver's stderr says
  // when writes start failing and when they succeed again.
  absl::Status Write(absl::FunctionRef<absl::Status(Database*)> fn);
  // Runs `fn` under the lock without a transaction (single statements are atomic; use for reads).
  absl::Status Read(absl::FunctionRef<absl::Status(Database*)> fn);

  // Wall-clock ms of the last write that failed for a storage reason; 0 when none has. While storage fails,
  // no heartbeat can be stored either: the lease manager counts leases from here
  // (server/scheduling/lease_manager.h).
  int64_t last_storage_failure_ms() const { return last_storage_failure_ms_.load(); }

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  absl::Status WriteLocked(absl::FunctionRef<absl::Status(Database*)> fn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NoteWrite(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A statement that failed for another reason than storage (a damaged page: DATA_LOSS; a constraint:
  // INTERNAL): the answer says what failed; nmserver's log also names the file and the statement.
  void NoteFailure(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> last_storage_failure_ms_{0};
  int64_t outage_started_ms_ ABSL_GUARDED_BY(mu_) = 0;  // 0: writes succeed.
  int64_t outage_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_STORE_H_
