// SubmitSweep's logic: the run count against the limit before anything else, idempotency, validation and
// expansion before any write, the never-fits check, dry
// runs, reuse of succeeded runs with the same content hash, and one transaction for the sweep and all its
// runs.
#ifndef NMSPARSE_SERVER_SWEEPS_SWEEP_SUBMISSION_H_
#define NMSPARSE_SERVER_SWEEPS_SWEEP_SUBMISSION_H_

#include "absl/status/statusor.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "server/store/store.h"
#include "server/store/sweep_table.h"
#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

// The response lists the runs without their specs (a sweep may have many thousands); a dry run includes
// spec and resolved_spec, since showing the expansion is its point.
//
// Runs needing more slots than the largest registered worker has are refused with INVALID_ARGUMENT. When no
// worker has registered yet, every size is accepted: workers may still come, and the runs wait in the queue.
//
// A sweep that expands to more than `max_runs` runs (counted from the spec, schemas/sweep_size.h) is refused
// with INVALID_ARGUMENT naming the count and the limit, before it is expanded or anything is read or stored.
//
// `owner` (the caller's token name and token SHA-256, "" without authentication) owns the sweep and its runs;
// an idempotency key finds only the same owner's sweep, and with another spec it is refused (ALREADY_EXISTS).
absl::StatusOr<v1::SubmitSweepResponse> SubmitSweep(Store* store, const SweepExpander& expand,
                                                    int64_t max_runs, const v1::SubmitSweepRequest& request,
                                                    const SweepOwner& owner);

// Stores one run of sweep `sweep_id` (QUEUED, or SUCCEEDED reusing a succeeded run with the same content hash
// unless the sweep says no_reuse), with its first state change saying `why`. Inside Store::Write. The answer
// notes an earlier CANCELLED or FAILED run with the same spec (`nmctl resume` would continue it).
absl::StatusOr<v1::Run> StoreRun(Database* db, const v1::SweepSpec& spec, int64_t sweep_id, const NewRun& run,
                                 int64_t now_ms, const std::string& why);

// What the sweep sets on each of its runs: gpus (gpus_per_run), priority and max_retries.
void ApplySweepSettings(const v1::SweepSpec& spec, NewRun* run);

// Stores the sweep and its runs (inside the caller's Store::Write): each run QUEUED, or SUCCEEDED reusing a
// succeeded run with the same content hash unless spec.no_reuse; a fork's first state change names its
// parent. Fills `out` with the sweep and the runs without their specs.
absl::Status StoreSweep(Database* db, const v1::SweepSpec& spec, const std::vector<NewRun>& runs,
                        const SweepOwner& owner, v1::SubmitSweepResponse* out);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_SWEEP_SUBMISSION_H_
