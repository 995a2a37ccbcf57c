// The run state machine: QUEUED -> ASSIGNED -> RUNNING -> SUCCEEDED | FAILED | CANCELLED | STOPPED_EARLY, and
// back to QUEUED
// when an attempt is lost or fails while retries remain. Each function is meant to run inside one
// Store::Write transaction; each change checks the run's current state and attempt (fencing) and appends a
// state_changes row.
#ifndef NMSPARSE_SERVER_STORE_RUN_TRANSITIONS_H_
#define NMSPARSE_SERVER_STORE_RUN_TRANSITIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/worker_gateway.pb.h"
#include "server/store/run_table.h"
#include "server/store/sqlite.h"

namespace nmsparse::server {

bool IsFinal(v1::RunState state);
bool IsActive(v1::RunState state);  // ASSIGNED or RUNNING: held by a worker.

// The run when `ra` names its current, active attempt; FAILED_PRECONDITION otherwise (stale attempt, or a run
// that is no longer held by a worker); NOT_FOUND for an unknown run.
absl::StatusOr<RunRecord> CheckAttempt(Database* db, const v1::RunAttempt& ra);

// QUEUED -> ASSIGNED with the next attempt number. Returns the assignment to send to the worker.
absl::StatusOr<v1::Assignment> AssignRun(Database* db, int64_t run_id, int64_t worker_id,
                                         const std::vector<uint32_t>& slots, int64_t now_ms);
// A multi-node run: QUEUED -> ASSIGNED on every node of `gang` at once (node 0 first; one attempt), with
// each node's assignment (its slots, node rank, where the ranks meet), by worker id.
absl::StatusOr<std::vector<std::pair<int64_t, v1::Assignment>>> AssignGang(Database* db, int64_t run_id,
                                                                           const v1::Gang& gang,
                                                                           int64_t now_ms);
// The current attempt's assignment for `worker_id` (a node of its gang, or its only worker), to send again
// after a reconnect. `run` read with RunDetail::kFull.
v1::Assignment AssignmentFor(const v1::Run& run, int64_t worker_id);
// ASSIGNED -> RUNNING (a repeated StartRun of the same attempt is accepted unchanged).
absl::Status MarkRunning(Database* db, const v1::RunAttempt& ra, int64_t now_ms);
// Ends the current attempt with the agent's outcome: SUCCEEDED stores final metrics (or those of the
// attempt's last "final" metric point), FAILED requeues while retries remain (but a permanent exit,
// contract::IsPermanentExit, ends the run FAILED at once: a bad spec fails every attempt), CANCELLED cancels,
// QUEUED hands the attempt back (HandBackAttempt).
// CompleteAttempt's SUCCEEDED also ends each QUEUED run of the same sweep with the same content hash (its
// twin: a dense run in another N:M column) SUCCEEDED with the same results, reused from it, as a run
// submitted after it would have been (not for a sweep submitted with no_reuse). The scheduler holds such
// twins back while the run trains (ActiveRunKeys).
absl::Status CompleteAttempt(Database* db, const v1::CompleteRunRequest& req, int64_t now_ms);
// The attempt was lost (worker gone, or it forgot the run): QUEUED while retries remain, else FAILED;
// CANCELLED instead when a cancel was requested.
absl::Status LoseAttempt(Database* db, const RunRecord& run, const std::string& reason, int64_t now_ms);
// The worker hands the attempt back (it is leaving; its ranks stopped at a checkpoint): QUEUED without
// costing a retry, so the next attempt resumes; CANCELLED instead when a cancel was requested.
absl::Status HandBackAttempt(Database* db, const RunRecord& run, const std::string& reason, int64_t now_ms);
// QUEUED/ASSIGNED -> CANCELLED now; RUNNING: flags the run so its worker is told to stop it (the worker then
// completes it CANCELLED). FAILED_PRECONDITION for a finished run.
absl::StatusOr<RunRecord> CancelRun(Database* db, int64_t run_id, const std::string& reason, int64_t now_ms);
// Early stopping's cancel: a RUNNING run is flagged like CancelRun's (its worker is told to stop it) and,
// however its attempt then ends (stopped, finished, lost, handed back), it ends STOPPED_EARLY with `reason`,
// never retried; an ASSIGNED run ends STOPPED_EARLY now. Its run directory and checkpoints are left alone.
absl::Status StopRunEarly(Database* db, const RunRecord& run, const std::string& reason, int64_t now_ms);

// CANCELLED/FAILED -> QUEUED for `nmctl resume`: the attempt number stays (the next assignment makes the
// next attempt, which resumes from the run's checkpoint), the retry budget and any cancel request are reset,
// and the change is recorded with `reason` (who asked). FAILED_PRECONDITION naming the run and its state for
// any other state.
absl::StatusOr<RunRecord> RequeueForResume(Database* db, int64_t run_id, const std::string& reason,
                                           int64_t now_ms);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_STORE_RUN_TRANSITIONS_H_
