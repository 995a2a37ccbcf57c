// The early-stopping decisions of a sweep (table rung_results): one row per run and rung, in the order the
// runs reached the rung. A row may wait for its decision while the rung has fewer results than its policy's
// min_peers (column promoted: 0 stopped, 1 promoted, 2 waiting). Callers hold the Store lock.
#ifndef NMSPARSE_SERVER_STORE_RUNG_TABLE_H_
#define NMSPARSE_SERVER_STORE_RUNG_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

struct RungResult {
  int64_t run_id = 0;
  double value = 0;
  bool promoted = false;
  bool waiting = false;  // Not decided yet: the rung waits for more results (promoted is then false).
  std::string reason;
};

// The results at one rung of a sweep, in arrival order.
absl::StatusOr<std::vector<RungResult>> RungResults(Database* db, int64_t sweep_id, int rung);
// The decision already taken for this run at this rung, if any.
absl::StatusOr<std::optional<RungResult>> FindRungResult(Database* db, int64_t sweep_id, int rung,
                                                         int64_t run_id);
// Appends a decision (or a waiting result) after the rung's earlier ones.
absl::Status InsertRungResult(Database* db, int64_t sweep_id, int rung, const RungResult& result,
                              int64_t now_ms);
// Records the decision of a waiting result, keeping its place in the rung's order.
absl::Status DecideWaitingRungResult(Database* db, int64_t sweep_id, int rung, const RungResult& result);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_RUNG_TABLE_H_
