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

// `submitted_by`: the caller's token name ("" without authentication).
absl::StatusOr<int64_t> InsertSweep(Database* db, const v1::SweepSpec& spec, int64_t now_ms,
                                    const std::string& submitted_by);
// The sweep stored under `key`, if any (an empty key never matches).
absl::StatusOr<std::optional<int64_t>> FindSweepByKey(Database* db, const std::string& key);
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
