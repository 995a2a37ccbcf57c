// Adaptive search in the coordinator: the runs of a sweep with a `search` block are proposed by the TPE
// sampler (server/search/tpe_sampler.h), a few at a time. At submission the sweep gets its first
// min(parallel, budget) proposals; each time one of its runs ends, the proposer proposes more while fewer
// than `parallel` of its runs are unfinished and it has fewer than `budget` runs. A proposal is an ordinary
// run: its point is expanded, validated and hashed like any other (server/sweeps/search_space.h). Proposal i
// sees the final metrics of the runs SUCCEEDED at that moment, in run order; the runs are stored, so a
// restarted coordinator goes on from them.
//
// Proposals run on the proposer's own thread, never on a gRPC handler or under the scheduler's lock: a
// handler only Notify()s. The sampler runs with no lock held; the store is locked only to read the sweep's
// runs and, after re-checking that nothing changed, to store the run. So however long a proposal takes, the
// coordinator keeps answering.
//
// A point that is not a valid run is drawn again (kMaxProposalAttempts in all, each a different draw); the
// run then says which attempt it came from. When no attempt gives a valid run, or the sweep's stored
// settings fail CheckSearch (schemas/sweep_blocks.h), the sweep's search ends: the reason is stored on the
// sweep (v1.Sweep.search_ended, shown by nmctl sweeps and follow and the dashboard) and logged, its runs go
// on, and no more are proposed. One sweep's data never stops the coordinator from starting or serving.
#ifndef NMSPARSE_SERVER_SWEEPS_SEARCH_PROPOSER_H_
#define NMSPARSE_SERVER_SWEEPS_SEARCH_PROPOSER_H_

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/background_loop.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

// Points drawn for one proposal before the sweep's search ends.
inline constexpr uint32_t kMaxProposalAttempts = 8;

// The first proposals of a search sweep, before it is stored (no result is known yet). INVALID_ARGUMENT when
// one of them finds no valid run.
absl::StatusOr<std::vector<NewRun>> InitialProposals(const SweepExpander& expand, const v1::SweepSpec& spec);

class SearchProposer {
 public:
  // `on_proposed` runs on the proposer's thread after it stored runs (the scheduler's Kick, the watchers'
  // signal). `before_draw`, for tests, runs on that thread before each point is drawn, with no lock held: a
  // gate there holds a proposal in progress.
  SearchProposer(Store* store, SweepExpander expand, std::function<void()> on_proposed = nullptr,
                 std::function<void(int64_t sweep_id)> before_draw = nullptr)
      : store_(store),
        expand_(std::move(expand)),
        on_proposed_(std::move(on_proposed)),
        before_draw_(std::move(before_draw)) {}
  ~SearchProposer() { Stop(); }

  // Starts the thread. Its first pass serves every search sweep (runs may have ended while no coordinator
  // was there); a pass that failed on the store is retried a second later.
  void Start();
  // Lets a proposal in progress finish, then joins the thread.
  void Stop();
  // Asks for the proposals sweep `sweep_id` is owed, or every search sweep is owed, soon. Never waits for a
  // proposal.
  void Notify(int64_t sweep_id);
  void NotifyAll();

  // What the thread does, on the caller's thread. Proposes and stores the runs sweep `sweep_id` is owed now
  // (none for a sweep without search, cancelled, or whose search ended), or ends its search with the reason.
  // Returns how many runs were stored; an error only when the store failed.
  absl::StatusOr<int> Refill(int64_t sweep_id);
  // Refill for every search sweep.
  absl::StatusOr<int> RefillAll();

 private:
  void Pass();

  Store* store_;
  SweepExpander expand_;
  std::function<void()> on_proposed_;
  std::function<void(int64_t)> before_draw_;
  absl::Mutex mu_;
  std::set<int64_t> pending_ ABSL_GUARDED_BY(mu_);
  bool all_pending_ ABSL_GUARDED_BY(mu_) = false;
  BackgroundLoop loop_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_SEARCH_PROPOSER_H_
