#include "server/scheduling/lease_manager.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {

absl::StatusOr<int> LeaseManager::Check(int64_t now_ms) {
  // While the database cannot be written, heartbeats cannot be stored: the silence is the coordinator's, not
  // the workers'. As after a restart (RenewAllLeases), every worker gets a full lease from the last failed
  // write to get a heartbeat through, so that a run whose completion waits in its worker's outbox is not
  // requeued.
  if (now_ms - store_->last_storage_failure_ms() < options_.lease_ms) return 0;
  int moved = 0;
  NM_RETURN_IF_ERROR(store_->Write([&](Database* db) -> absl::Status {
    moved = 0;
    NM_RETURN_IF_ERROR(ExpireWorkers(db, now_ms - options_.lease_ms, now_ms).status());
    NM_ASSIGN_OR_RETURN(std::vector<int64_t> lost, DeadWorkersHoldingRuns(db, now_ms - options_.grace_ms));
    for (int64_t worker : lost) {
      // Every run it holds, as its only node or as any node of a gang: a gang fails as one.
      NM_ASSIGN_OR_RETURN(std::vector<RunRecord> runs,
                          ActiveRunsHeldBy(db, worker, v1::RUN_STATE_UNSPECIFIED, RunDetail::kSummary));
      for (const RunRecord& r : runs) {
        NM_RETURN_IF_ERROR(LoseAttempt(
            db, r, absl::StrCat("worker ", worker, " lost its lease (attempt ", r.run.attempt(), ")"),
            now_ms));
        ++moved;
      }
    }
    return absl::OkStatus();
  }));
  if (moved > 0 && on_requeue_) on_requeue_();
  return moved;
}

void LeaseManager::Start() {
  absl::Duration period =
      absl::Milliseconds(std::clamp<int64_t>(std::min(options_.lease_ms, options_.grace_ms) / 4, 10, 200));
  loop_.Start(period, [this] {
    absl::StatusOr<int> moved = Check(NowMs());
    if (!moved.ok())
      std::fprintf(stderr, "nmserver: lease check failed: %s\n", moved.status().ToString().c_str());
  });
}

void LeaseManager::Stop() { loop_.Stop(); }

}  // namespace nmsparse::server
