// ForkRun's logic (nmctl fork): a new run, in a sweep of its own, that starts from a finished run's last
// checkpoint with the parent's spec changed by `--set` overrides (the same key table and checks as nmctl
// submit --set), expanded and validated like a submitted sweep. Its lineage (parent, parent attempt and step,
// overrides) is stored with it and is part of its content hash, so a fork is never reused for a fresh run nor
// a fresh run for a fork. docs/nmctl.md, "Resume and fork", has the semantics.
#ifndef NMSPARSE_SERVER_SWEEPS_RUN_FORK_H_
#define NMSPARSE_SERVER_SWEEPS_RUN_FORK_H_

#include <string>

#include "absl/status/statusor.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "server/auth/caller.h"
#include "server/store/event_table.h"
#include "server/store/run_table.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

// The fork as it will be stored: its one-run sweep and the run.
struct ForkPlan {
  v1::SweepSpec sweep;
  NewRun run;
};

// Builds the fork of `parent` (read with RunDetail::kFull) without storing it. Refusals name the run, the key
// and the values: a parent that is not SUCCEEDED, FAILED or CANCELLED, that reused another run's results or
// recorded no step (FAILED_PRECONDITION); an unknown key or bad value, a changed model, seed or
// resources.precision (the checkpoint holds the parent's), a schedule that ends before the parent's recorded
// step (INVALID_ARGUMENT).
absl::StatusOr<ForkPlan> PlanFork(const RunRecord& parent, const std::string& parent_sweep_name,
                                  const RecordedProgress& progress, const v1::ForkRunRequest& request,
                                  const SweepExpander& expand);

// Checks that `caller` may fork the run (users their own, admins any), plans the fork and stores it in one
// transaction, refusing when the parent changed in between (a resume started).
absl::StatusOr<v1::ForkRunResponse> ForkRun(Store* store, const SweepExpander& expand,
                                            const v1::ForkRunRequest& request, const Caller& caller);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_RUN_FORK_H_
