#include "server/search/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nmsparse::server {
namespace {

constexpr double kPriorCentre = 0.5;
constexpr double kPriorBandwidth = 1.0;  // The unit coordinate's width, as Optuna's prior takes the range's.
constexpr double kPriorWeight = 1.0;
constexpr size_t kFullWeightPoints = 25;  // The latest points that keep weight 1.

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

size_t Pick(const std::vector<double>& probabilities, std::mt19937_64& rng) {
  double r = Uniform01(rng);
  for (size_t k = 0; k + 1 < probabilities.size(); ++k) {
    if (r < probabilities[k]) return k;
    r -= probabilities[k];
  }
  return probabilities.size() - 1;
}

}  // namespace

std::vector<double> ParzenWeights(size_t n) {
  std::vector<double> w(n, 1.0);
  if (n > kFullWeightPoints) {
    // The older n - 25 points ramp evenly from 1/n to 1, as Optuna's default_weights does.
    const size_t ramp = n - kFullWeightPoints;
    const double lo = 1.0 / static_cast<double>(n);
    for (size_t i = 0; i < ramp; ++i) {
      w[i] = ramp == 1 ? lo : lo + (1.0 - lo) * static_cast<double>(i) / static_cast<double>(ramp - 1);
    }
  }
  w.push_back(kPriorWeight);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= total;
  return w;
}

std::vector<double> ParzenBandwidths(const std::vector<double>& points) {
  const size_t n = points.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return points[a] < points[b]; });
  std::vector<double> sigmas(n);
  for (size_t r = 0; r < n; ++r) {
    const double here = points[order[r]];
    const double left = r > 0 ? here - points[order[r - 1]] : here;           // The end 0 ...
    const double right = r + 1 < n ? points[order[r + 1]] - here : 1 - here;  // ... and 1 ...
    if (n == 1) {
      sigmas[order[r]] = std::max(left, right);
    } else {  // ... are no neighbours when there are two points or more.
      sigmas[order[r]] = r == 0 ? right : r + 1 == n ? left : std::max(left, right);
    }
  }
  const double min_sigma = 1.0 / std::min(100.0, 2.0 + static_cast<double>(n));  // 1 + kernels (+ prior).
  for (double& s : sigmas) s = std::clamp(s, min_sigma, 1.0);
  return sigmas;
}

ParzenEstimator::ParzenEstimator(const std::vector<int>& choices,
                                 const std::vector<std::vector<double>>& points)
    : weights_(ParzenWeights(points.size())) {
  const size_t kernels = points.size() + 1;
  for (size_t a = 0; a < choices.size(); ++a) {
    Axis axis;
    axis.choices = choices[a];
    std::vector<double> coordinate;
    for (const std::vector<double>& p : points) coordinate.push_back(p[a]);
    if (axis.choices == 0) {
      axis.mus = coordinate;
      axis.sigmas = ParzenBandwidths(coordinate);
      axis.mus.push_back(kPriorCentre);
      axis.sigmas.push_back(kPriorBandwidth);
      for (size_t k = 0; k < kernels; ++k) {
        const double mu = axis.mus[k], sigma = axis.sigmas[k];
        axis.log_masses.push_back(std::log(NormalCdf((1 - mu) / sigma) - NormalCdf(-mu / sigma)));
      }
    } else {
      const double share = kPriorWeight / static_cast<double>(kernels);  // Every choice's, per point kernel.
      const double row_total = 1.0 + share * axis.choices;
      for (size_t k = 0; k < kernels; ++k) {
        for (int c = 0; c < axis.choices; ++c) {
          const double p = k < points.size()
                               ? (share + (c == static_cast<int>(coordinate[k]) ? 1.0 : 0.0)) / row_total
                               : 1.0 / axis.choices;  // The prior kernel.
          axis.log_probs.push_back(std::log(p));
        }
      }
    }
    axes_.push_back(std::move(axis));
  }
}

double ParzenEstimator::LogKernel(const Axis& axis, size_t kernel, double x) const {
  if (axis.choices > 0) return axis.log_probs[kernel * axis.choices + static_cast<size_t>(x)];
  const double z = (x - axis.mus[kernel]) / axis.sigmas[kernel];
  return -0.5 * z * z - std::log(axis.sigmas[kernel] * std::sqrt(2 * M_PI)) - axis.log_masses[kernel];
}

double ParzenEstimator::LogPdf(const std::vector<double>& x) const {
  // log Σ_k w_k Π_a p_ka(x_a), summed around the largest term so that far tails do not underflow to log 0.
  std::vector<double> terms;
  for (size_t k = 0; k < weights_.size(); ++k) {
    double t = std::log(weights_[k]);
    for (size_t a = 0; a < axes_.size(); ++a) t += LogKernel(axes_[a], k, x[a]);
    terms.push_back(t);
  }
  const double top = *std::max_element(terms.begin(), terms.end());
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

std::vector<double> ParzenEstimator::Sample(std::mt19937_64& rng) const {
  const size_t k = Pick(weights_, rng);
  std::vector<double> x;
  for (const Axis& axis : axes_) {
    if (axis.choices > 0) {
      std::vector<double> row;
      for (int c = 0; c < axis.choices; ++c) row.push_back(std::exp(axis.log_probs[k * axis.choices + c]));
      x.push_back(static_cast<double>(Pick(row, rng)));
      continue;
    }
    // Rejection: a kernel keeps at least about a third of its mass in [0, 1] (the prior's, sd 1 at 0.5: 38%;
    // a point's: its centre is inside), so 64 tries fail with odds below 1e-11.
    std::normal_distribution<double> normal(axis.mus[k], axis.sigmas[k]);
    double u = std::clamp(axis.mus[k], 0.0, 1.0);
    for (int attempt = 0; attempt < 64; ++attempt) {
      const double v = normal(rng);
      if (v >= 0 && v <= 1) {
        u = v;
        break;
      }
    }
    x.push_back(u);
  }
  return x;
}

}  // namespace nmsparse::server
