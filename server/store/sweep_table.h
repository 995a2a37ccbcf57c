// Rows of the sweeps table. Callers hold the Store lock (inside Store::Read / Store::Write).
#ifndef NMSPARSE_SERVER_STORE_SWEEP_TABLE_H_
#define NMSPARSE_SERVER_STORE_SWEEP_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// Who submitted a sweep: the caller's token name, shown as its submitter, and the SHA-256 of the token
// itself, to which ownership and idempotency keys are bound (a name revoked and given to someone else is a
// new owner). Both "" without authentication.
struct SweepOwner {
  std::string name;
  std::string token_sha256;
};

absl::StatusOr<int64_t> InsertSweep(Database* db, const v1::SweepSpec& spec, int64_t now_ms,
                                    const SweepOwner& owner);
// The sweep `owner` stored under `key`, if any (an empty key never matches; keys are per owner).
absl::StatusOr<std::optional<int64_t>> FindSweepByKey(Database* db, const SweepOwner& owner,
                                                      const std::string& key);
// Who owns sweep `id` and its runs. Its token_sha256 is "" without authentication, or for a sweep whose
// submitter's token was gone before ownership was bound to tokens (then only admins change it). NotFound
// names the id.
absl::StatusOr<SweepOwner> LoadSweepOwner(Database* db, int64_t id);
// NotFound names the id. run_counts holds the number of runs per state name.
absl::StatusOr<v1::Sweep> LoadSweep(Database* db, int64_t id);
// LoadSweep without the spec's grid axes, whose values a large grid lists by the thousand: what the per-event
// handlers read (early stopping, search), at the same cost for every sweep size.
absl::StatusOr<v1::Sweep> LoadSweepWithoutGrid(Database* db, int64_t id);
// Newest first.
absl::StatusOr<std::vector<v1::Sweep>> ListSweeps(Database* db);
absl::Status MarkSweepCancelled(Database* db, int64_t id);
// Records why the sweep's search proposes no more runs (v1.Sweep.search_ended; `reason` is not empty).
absl::Status EndSearch(Database* db, int64_t id, const std::string& reason);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_SWEEP_TABLE_H_
