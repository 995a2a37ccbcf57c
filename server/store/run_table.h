// Rows of the runs table (and their labels). Callers hold the Store lock (inside Store::Read / Store::Write).
#ifndef NMSPARSE_SERVER_STORE_RUN_TABLE_H_
#define NMSPARSE_SERVER_STORE_RUN_TABLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

// A run as expanded from a sweep, ready to be stored.
struct NewRun {
  uint32_t index = 0;
  std::vector<std::pair<std::string, std::string>> labels;  // Axis name -> value label, in axis order.
  std::string content_hash;
  // A dense run's hash before dense runs ignored their N:M keys (schemas/content_hash.h), else empty: stored
  // runs keep their hashes, so reuse looks this up too.
  std::string legacy_content_hash;
  std::string resolved_spec;  // The run's spec: its canonical YAML, stored once.
  uint32_t gpus = 1;          // Ranks on each node.
  uint32_t nodes = 1;         // Nodes (workers) the run spans.
  int32_t priority = 0;
  uint32_t max_retries = 0;
  v1::RunLineage lineage;  // Set (parent_run_id != 0) for a fork.
};

// A stored run: its API view plus the bookkeeping the API does not show.
struct RunRecord {
  v1::Run run;
  uint32_t gpus = 1;
  uint32_t nodes = 1;
  uint32_t retries_used = 0;
  bool cancel_requested = false;
  std::string early_stop_reason;  // Set with cancel_requested by early stopping: the run ends STOPPED_EARLY.
  std::vector<std::string> label_order;  // Axis names in axis order (run.labels is a map).
};

// A succeeded run whose results a new run with the same content hash reuses.
struct ReuseSource {
  int64_t run_id = 0;
  std::string final_metrics;  // Serialized MetricPoint.
};

// Stores a run QUEUED, or SUCCEEDED with reused_from when `reuse` is given. Returns the new id.
absl::StatusOr<int64_t> InsertRun(Database* db, int64_t sweep_id, const NewRun& run, int64_t now_ms,
                                  const ReuseSource* reuse);
// The earliest succeeded run with this content hash, if any.
absl::StatusOr<std::optional<ReuseSource>> FindSucceeded(Database* db, const std::string& content_hash);

// The latest CANCELLED or FAILED run with this content hash (its id and state), if any: a resubmission of the
// same spec is a new run that starts fresh, while `nmctl resume` of that one would continue it.
struct ResumableRun {
  int64_t run_id = 0;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
};
absl::StatusOr<std::optional<ResumableRun>> FindResumable(Database* db, const std::string& content_hash);

enum class RunDetail { kSummary, kFull };  // kFull adds spec and resolved_spec.

// NotFound names the id.
absl::StatusOr<RunRecord> LoadRun(Database* db, int64_t id, RunDetail detail);

struct RunFilter {
  int64_t sweep_id = 0;                            // 0: every sweep.
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;  // Unspecified: every state.
  int64_t worker_id = 0;                           // 0: any worker.
  bool active_only = false;                        // ASSIGNED or RUNNING only.
  uint32_t limit = 0;                              // 0: no limit.
  uint32_t offset = 0;                             // Skipped first, in the same order.
};
// In sweep order (sweep id, then index).
absl::StatusOr<std::vector<RunRecord>> QueryRuns(Database* db, const RunFilter& filter, RunDetail detail);

// The waiting runs in scheduling order: priority descending, then submission (id).
struct QueuedRun {
  int64_t run_id = 0;
  uint32_t gpus = 1;  // On each node.
  uint32_t nodes = 1;
  int64_t sweep_id = 0;
  std::string content_hash;
};
absl::StatusOr<std::vector<QueuedRun>> QueuedInOrder(Database* db);

// Scans the queue in order and hands each run needing at most `max_gpus` slots to `visit` until it returns
// false.
absl::Status ScanQueue(Database* db, uint32_t max_gpus, const std::function<bool(const QueuedRun&)>& visit);

// The slots held by ASSIGNED and RUNNING runs, per worker id (every node of a multi-node run's gang).
absl::StatusOr<std::vector<std::pair<int64_t, std::vector<uint32_t>>>> HeldSlots(Database* db);

// Sets queue_position on the QUEUED runs among `runs` (1-based within the whole queue).
absl::Status FillQueuePositions(Database* db, std::vector<RunRecord>* runs);

// Whether worker `worker_id` holds (a node of) the run's current attempt, and as which node (-1: none; a
// single-node run's worker is node 0).
bool HoldsAttempt(const v1::Run& run, int64_t worker_id);
int NodeRankOf(const v1::Run& run, int64_t worker_id);
// The active runs (in `state`, or ASSIGNED and RUNNING when unspecified) whose attempt the worker holds, as
// the single node or as any node of a gang. Active runs are few: they are filtered here, not in SQL.
absl::StatusOr<std::vector<RunRecord>> ActiveRunsHeldBy(Database* db, int64_t worker_id, v1::RunState state,
                                                        RunDetail detail);

std::string FormatSlots(const std::vector<uint32_t>& slots);

// "SWEEP_ID/HASH" of each run a worker holds (ASSIGNED or RUNNING): a queued run of the same sweep with
// the same content hash (a dense run in every N:M column) waits for it and then reuses its results.
absl::StatusOr<std::set<std::string>> ActiveRunKeys(Database* db);
std::string RunKey(int64_t sweep_id, const std::string& content_hash);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_RUN_TABLE_H_
