#include "cli/progress_bar.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/metric_text.h"

namespace nmsparse::cli {

std::string RenderProgressBar(double done, double total, int width, const std::string& unit) {
  width = std::max(width, 1);
  const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(std::floor(fraction * width + 1e-9));
  std::string bar = absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "] ");
  absl::StrAppend(&bar, FormatMetric(std::max(done, 0.0)), "/", total > 0 ? FormatMetric(total) : "?");
  if (!unit.empty()) absl::StrAppend(&bar, " ", unit);
  return bar;
}

}  // namespace nmsparse::cli
