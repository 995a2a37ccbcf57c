// The tree-structured Parzen estimator (TPE; Bergstra et al., "Algorithms for Hyper-Parameter Optimization",
// NeurIPS 2011) that proposes the runs of a sweep's `search` block (docs/sweeps.md, "Search"), over the
// sweep's random axes: continuous ({min, max}), log (log: true), integer (integer: true) and categorical
// (choices).
//
// Each axis is handled on its own, in a unit coordinate: u in [0, 1] for a range (on the log scale for a log
// axis; an integer axis spans [min - 0.5, max + 0.5] and rounds), a choice index for a categorical axis.
// Proposal i:
//   - while fewer than n_startup results are known, every axis is drawn uniformly in its coordinate;
//   - else the results are sorted best first (ties: lower run index first) and split: the best
//     max(1, ceil(gamma * n)) are "good", the rest "bad". For each axis, l(x) is a Parzen density over the
//     good points and g(x) over the bad ones: on a range, an equal mixture of the uniform prior and one
//     Gaussian per point (truncated to [0, 1], bandwidth from Scott's rule on those points, at least 0.05);
//     on choices, (count + 1) / (points + K). n_candidates candidates are drawn from l, and the one with the
//     largest sum over axes of log l(x) - log g(x) is proposed (the first one on a tie).
// The draws come from a std::mt19937_64 seeded with (seed, i), so a proposal depends on the seed, its index
// and the results passed in, and on nothing else (not on time or on earlier calls).
#ifndef NMSPARSE_SERVER_TPE_SAMPLER_H_
#define NMSPARSE_SERVER_TPE_SAMPLER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

// One finished run: its value text for each axis (axis order) and its metric.
struct TpeResult {
  std::vector<std::string> values;
  double metric = 0;
};

class TpeSampler {
 public:
  TpeSampler(std::vector<v1::RandomAxis> axes, v1::Search search);

  // The value texts of proposal `index` (one per axis, as the axis' YAML value), given the finished runs'
  // results in run order. InvalidArgument when a result's value does not belong to its axis.
  absl::StatusOr<std::vector<std::string>> Propose(uint64_t index,
                                                   const std::vector<TpeResult>& results) const;

 private:
  std::vector<v1::RandomAxis> axes_;
  v1::Search search_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_TPE_SAMPLER_H_
