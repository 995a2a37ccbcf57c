// The mean and sample standard deviation every aggregate of the report shows (the compare table's cells,
// the grouped curves, replicates over seeds): one definition, so that a figure's error bar and the table's
// "± std (n)" are the same number.
#ifndef NMSPARSE_REPORT_SAMPLE_STATS_H_
#define NMSPARSE_REPORT_SAMPLE_STATS_H_

#include <cmath>
#include <vector>

namespace nmsparse::report {

// 0 for no values.
inline double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// n - 1 in the denominator; 0 for fewer than two values.
inline double SampleStd(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double m = Mean(values);
  double squares = 0.0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SAMPLE_STATS_H_
