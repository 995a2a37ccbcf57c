#include "report/best_epoch.h"

#include <cmath>
#include <optional>

#include "contract/metric_line.h"

namespace nmsparse::report {
namespace {

std::optional<double> BestOverEpochs(const RunData& r, const std::string& metric, bool maximize) {
  std::optional<double> best;
  for (const v1::MetricPoint& p : r.curve) {
    if (p.kind() != contract::kKindEpoch && !p.kind().empty()) continue;
    auto value = p.values().find(metric);
    if (value == p.values().end() || !std::isfinite(value->second)) continue;
    if (!best || (maximize ? value->second > *best : value->second < *best)) best = value->second;
  }
  return best;
}

}  // namespace

std::vector<v1::Run> AtBestEpoch(const SweepData& data, const std::vector<std::string>& metrics,
                                 bool maximize) {
  std::vector<v1::Run> runs;
  for (const RunData& r : data.runs) {
    v1::Run& run = runs.emplace_back(r.run);
    for (const std::string& metric : metrics) {
      if (run.final_metrics().count(metric) == 0) continue;
      if (std::optional<double> best = BestOverEpochs(r, metric, maximize)) {
        (*run.mutable_final_metrics())[metric] = *best;
      }
    }
  }
  return runs;
}

}  // namespace nmsparse::report
