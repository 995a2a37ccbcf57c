#include "server/store/store.h"

#include "server/store/migrations.h"
#include "server/store/status_macros.h"

namespace nmsparse::server {

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  NM_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path));
  NM_RETURN_IF_ERROR(Migrate(db.get()).status());
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

absl::Status Store::Write(absl::FunctionRef<absl::Status(Database*)> fn) {
  absl::MutexLock lock(&mu_);
  Transaction tx(db_.get());
  NM_RETURN_IF_ERROR(tx.Begin());
  NM_RETURN_IF_ERROR(fn(db_.get()));
  return tx.Commit();
}

absl::Status Store::Read(absl::FunctionRef<absl::Status(Database*)> fn) {
  absl::MutexLock lock(&mu_);
  return fn(db_.get());
}

}  // namespace nmsparse::server
