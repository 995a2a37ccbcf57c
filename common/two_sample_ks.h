// The two-sample Kolmogorov-Smirnov test, for tests that compare a distribution with timm's draws. Header
// only, so that both the Bazel and the CMake tests take it without a library.
#ifndef NMSPARSE_COMMON_TWO_SAMPLE_KS_H_
#define NMSPARSE_COMMON_TWO_SAMPLE_KS_H_

#include <algorithm>
#include <cmath>
#include <vector>

namespace nmsparse {

// The statistic D: the largest gap between the two empirical CDFs (ties: both evaluated after each
// distinct value).
inline double KsStatistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  size_t i = 0, j = 0;
  double d = 0.0;
  while (i < a.size() && j < b.size()) {
    const double v = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == v) ++i;
    while (j < b.size() && b[j] == v) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

// The asymptotic p-value of D (Numerical Recipes' probks with the effective-size correction).
inline double KsPValue(const std::vector<double>& a, const std::vector<double>& b) {
  const double d = KsStatistic(a, b);
  const double ne = std::sqrt(static_cast<double>(a.size()) * b.size() / (a.size() + b.size()));
  const double lambda = (ne + 0.12 + 0.11 / ne) * d;
  double p = 0.0, sign = 2.0;
  for (int k = 1; k <= 100; ++k, sign = -sign) p += sign * std::exp(-2.0 * k * k * lambda * lambda);
  return std::clamp(p, 0.0, 1.0);
}

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_TWO_SAMPLE_KS_H_
