#include "common/metric_text.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nmsparse {

std::string FormatMetric(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e5) {
    // Counts such as FLOPs with an SI prefix and three significant digits: 42859069440 -> 42.9G.
    static constexpr const char* kPrefixes[] = {"k", "M", "G", "T", "P", "E"};
    int prefix = -1;
    double scaled = value;
    while (std::fabs(scaled) >= 999.5 && prefix + 1 < 6) {
      scaled /= 1000.0;
      ++prefix;
    }
    if (std::fabs(scaled) < 999.5) return absl::StrCat(absl::StrFormat("%.3g", scaled), kPrefixes[prefix]);
    return absl::StrFormat("%.3g", value);
  }
  if (magnitude >= 1000.0) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.4g", value);
}

std::string FormatLabelValue(const std::string& label) {
  double value = 0.0;
  if (label.find_first_of(".eE") == std::string::npos || !absl::SimpleAtod(label, &value) ||
      !std::isfinite(value)) {
    return label;
  }
  return FormatMetric(value);
}

}  // namespace nmsparse
