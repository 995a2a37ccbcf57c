// Rows of the workers table. Callers hold the Store lock.
#ifndef NMSPARSE_SERVER_STORE_WORKER_TABLE_H_
#define NMSPARSE_SERVER_STORE_WORKER_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

struct WorkerRecord {
  v1::Worker worker;  // id, host, slots, job, last_heartbeat_ms, alive (not running_runs / free_slots).
  int64_t dead_since_ms = 0;
};

// Registers a worker: updates row `id` when it exists, else inserts a new one. Returns its id. `job` is the
// batch job it runs in ("slurm:<id>"; empty when started by hand); `advertise_addr` where other nodes of a
// multi-node run reach it, `storage` the shared storage its work directory is on (empty: none).
absl::StatusOr<int64_t> UpsertWorker(Database* db, int64_t id, const std::string& host,
                                     const google::protobuf::RepeatedPtrField<v1::Slot>& slots,
                                     const std::string& job, int64_t now_ms,
                                     const std::string& advertise_addr = "", const std::string& storage = "");
// NotFound names the id.
absl::StatusOr<WorkerRecord> LoadWorker(Database* db, int64_t id);
// The SHA-256 (hex) of worker `id`'s registration session ('' for one registered before sessions); NotFound
// names an unknown id.
absl::StatusOr<std::string> WorkerSessionSha256(Database* db, int64_t id);
// Binds worker `id` to the session whose SHA-256 is `sha256_hex`.
absl::Status SetWorkerSession(Database* db, int64_t id, const std::string& sha256_hex);
// The worker whose session has SHA-256 `sha256_hex`, or 0 when none has.
absl::StatusOr<int64_t> WorkerBySession(Database* db, const std::string& sha256_hex);
absl::StatusOr<std::vector<WorkerRecord>> ListWorkerRecords(Database* db);
// Renews the lease of a live worker; NotFound when it is unknown or already marked not alive.
absl::Status TouchWorker(Database* db, int64_t id, int64_t now_ms);
// Marks a leaving worker not alive now, so that it gets no more runs.
absl::Status MarkWorkerGone(Database* db, int64_t id, int64_t now_ms);
// Marks live workers silent since before `deadline_ms` not alive; returns their ids.
absl::StatusOr<std::vector<int64_t>> ExpireWorkers(Database* db, int64_t deadline_ms, int64_t now_ms);
// Workers marked not alive before `deadline_ms` that still hold ASSIGNED or RUNNING runs.
absl::StatusOr<std::vector<int64_t>> DeadWorkersHoldingRuns(Database* db, int64_t deadline_ms);
// Gives every live worker a fresh lease (on coordinator start, so that workers can re-register first).
absl::Status RenewAllLeases(Database* db, int64_t now_ms);
// Every registered worker with its active runs and free slots (0 when not alive).
absl::StatusOr<std::vector<v1::Worker>> WorkersWithRuns(Database* db);
// The largest slot count of any registered worker (0 when none is registered).
absl::StatusOr<uint32_t> LargestWorkerSlots(Database* db, int64_t* worker_id);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_WORKER_TABLE_H_
