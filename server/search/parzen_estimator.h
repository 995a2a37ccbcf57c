// The Parzen estimators of the TPE sampler (server/search/tpe_sampler.h): the densities l(x) (fitted to the
// good results) and g(x) (to the bad ones) over all of a search's axes, built as Optuna 5's TPESampler builds
// them by default (multivariate: one kernel per point, a product over the axes; Hyperopt's kernels per axis).
//
// The mixture has one kernel per point and a prior kernel. Weights: the prior weighs 1; the points, in run
// order, weigh 1 each, except that past 25 points the older ones ramp linearly from 1/n up to 1 (the latest
// 25 weigh 1), so old results count less. A draw picks a kernel by weight and draws every axis from it.
//
// On a range axis, in its unit coordinate u in [0, 1], a point's kernel is a Gaussian truncated to [0, 1]
// and the prior's is one at 0.5 of standard deviation 1 (nearly uniform).
//   - Bandwidth per point: the points are sorted; a point's bandwidth is the larger of the gaps to its
//     neighbours, where the lowest and the highest take only their inner gap (the ends 0 and 1 count as
//     neighbours only for a lone point). So a point far from the others gets a wide kernel, a cluster narrow
//     ones.
//   - Clip: every bandwidth is at least 1 / min(100, 1 + kernels) (the "magic clip"; kernels counts the
//     prior) and at most 1. The single Scott's-rule bandwidth with a 0.05 floor that this replaces narrowed
//     every kernel at once as the good points clustered, and proposals collapsed onto the best point
//     (issue 27).
// On a categorical axis of K choices a point's kernel puts 1 + p on its own choice and p on every choice
// (p = 1 / kernels), normalised; the prior's is uniform.
#ifndef NMSPARSE_SERVER_SEARCH_PARZEN_ESTIMATOR_H_
#define NMSPARSE_SERVER_SEARCH_PARZEN_ESTIMATOR_H_

#include <cstddef>
#include <random>
#include <vector>

namespace nmsparse::server {

// The mixture weights of `n` points in run order followed by the prior's, summing to 1.
std::vector<double> ParzenWeights(size_t n);

// The bandwidths of points on a range axis (unit coordinates), in their order (see the header comment).
std::vector<double> ParzenBandwidths(const std::vector<double>& points);

class ParzenEstimator {
 public:
  // `choices[a]` is the number of choices of axis a, 0 for a range axis. `points` in run order, each with
  // one coordinate per axis (unit coordinate or choice index).
  ParzenEstimator(const std::vector<int>& choices, const std::vector<std::vector<double>>& points);

  double LogPdf(const std::vector<double>& x) const;
  std::vector<double> Sample(std::mt19937_64& rng) const;

 private:
  // Per axis: for a range, each kernel's centre, bandwidth and log of its mass inside [0, 1]; for choices,
  // each kernel's log probability of each choice (kernel-major).
  struct Axis {
    int choices = 0;
    std::vector<double> mus, sigmas, log_masses;
    std::vector<double> log_probs;
  };
  double LogKernel(const Axis& axis, size_t kernel, double x) const;

  std::vector<double> weights_;
  std::vector<Axis> axes_;
};

// A draw in [0, 1) from 53 random bits.
inline double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SEARCH_PARZEN_ESTIMATOR_H_
