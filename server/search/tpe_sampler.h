// The tree-structured Parzen estimator (TPE; Bergstra et al., "Algorithms for Hyper-Parameter Optimization",
// NeurIPS 2011) that proposes the runs of a sweep's `search` block (docs/sweeps.md, "Search"), over the
// sweep's random axes: continuous ({min, max}), log (log: true), integer (integer: true) and categorical
// (choices).
//
// Each axis has a unit coordinate: u in [0, 1] for a range (on the log scale for a log
// axis; an integer axis spans [min - 0.5, max + 0.5] and rounds), a choice index for a categorical axis.
// Proposal i:
//   - while fewer than n_startup results are known, every axis is drawn uniformly in its coordinate;
//   - else the results are sorted best first (ties: lower run index first) and split: the best
//     GoodCount(gamma, n) are "good", the rest "bad". l(x) is a Parzen estimator over the good points and
//     g(x) over the bad ones (server/search/parzen_estimator.h: one product kernel per point with its own
//     bandwidth per axis, and a prior kernel). min(n_candidates, limits::kMaxSearchCandidates) candidates are
//     drawn from l, and the one with the largest log l(x) - log g(x) is proposed (the first one on a tie).
//     The cap bounds a proposal's cost whatever a stored sweep says.
// The draws come from a std::mt19937_64 seeded with (seed, i) (with (seed, i, attempt) for a retry of the
// same proposal, attempt > 0), so a proposal depends on the seed, its index, the attempt and the results
// passed in, and on nothing else (not on time or on earlier calls).
#ifndef NMSPARSE_SERVER_SEARCH_TPE_SAMPLER_H_
#define NMSPARSE_SERVER_SEARCH_TPE_SAMPLER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

// The number of good results among n: ceil(gamma * n), at least 1 and at most 25 (Optuna's rule, whose
// default gamma is 0.1).
size_t GoodCount(double gamma, size_t n);

// One finished run: its value text for each axis (axis order) and its metric.
struct TpeResult {
  std::vector<std::string> values;
  double metric = 0;
};

class TpeSampler {
 public:
  TpeSampler(std::vector<v1::RandomAxis> axes, v1::Search search);

  // The value texts of proposal `index` (one per axis, as the axis' YAML value), given the finished runs'
  // results in run order; `attempt` > 0 draws another point for the same proposal (when the earlier ones
  // were not valid runs). InvalidArgument when a result's value does not belong to its axis.
  absl::StatusOr<std::vector<std::string>> Propose(uint64_t index, const std::vector<TpeResult>& results,
                                                   uint32_t attempt = 0) const;

 private:
  std::vector<v1::RandomAxis> axes_;
  v1::Search search_;
};

// The value texts at the edges of an axis: its min and max (one value when they are equal) for a range, as
// the sampler writes them; every choice for a categorical axis.
std::vector<std::string> ExtremeValues(const v1::RandomAxis& axis);
// The value text in the middle of an axis (of its own scale for a range; the first choice).
std::string MiddleValue(const v1::RandomAxis& axis);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SEARCH_TPE_SAMPLER_H_
