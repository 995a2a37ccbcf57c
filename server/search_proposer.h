// Adaptive search in the coordinator: the runs of a sweep with a `search` block are proposed by the TPE
// sampler (server/tpe_sampler.h), a few at a time. At submission the sweep gets its first min(parallel,
// budget) proposals; each time one of its runs ends, Refill proposes more while fewer than `parallel` of its
// runs are unfinished and it has fewer than `budget` runs. A proposal is an ordinary run: its random-axis
// values are applied as one-value grid axes (labels key=value) and the run is expanded, validated and hashed
// like any other. Proposal i sees the final metrics of the runs SUCCEEDED at that moment, in run order; the
// runs are stored, so a restarted coordinator goes on from them.
#ifndef NMSPARSE_SERVER_SEARCH_PROPOSER_H_
#define NMSPARSE_SERVER_SEARCH_PROPOSER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/store.h"
#include "server/sweep_expander.h"

namespace nmsparse::server {

// The first proposals of a search sweep, before it is stored (no result is known yet).
absl::StatusOr<std::vector<NewRun>> InitialProposals(const SweepExpander& expand, const v1::SweepSpec& spec);

class SearchProposer {
 public:
  SearchProposer(Store* store, SweepExpander expand) : store_(store), expand_(std::move(expand)) {}

  // Proposes the runs sweep `sweep_id` is owed now (none for a sweep without search, or cancelled). Returns
  // how many were stored.
  absl::StatusOr<int> Refill(int64_t sweep_id);
  // Refill for every search sweep (at start-up, and after leases expire: runs may have ended then).
  absl::StatusOr<int> RefillAll();

 private:
  Store* store_;
  SweepExpander expand_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SEARCH_PROPOSER_H_
