// The coordinator's database: one SQLite connection behind a lock. Every write is one IMMEDIATE transaction
// (all of it or nothing); reads run under the same lock so they see whole transactions only.
#ifndef NMSPARSE_SERVER_STORE_STORE_H_
#define NMSPARSE_SERVER_STORE_STORE_H_

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
  // Opens the file and applies pending migrations.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);

  // Runs `fn` in one transaction; commits when it returns OK, rolls back otherwise (and returns its status).
  absl::Status Write(absl::FunctionRef<absl::Status(Database*)> fn);
  // Runs `fn` under the lock without a transaction (single statements are atomic; use for reads).
  absl::Status Read(absl::FunctionRef<absl::Status(Database*)> fn);

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  absl::Mutex mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_STORE_H_
