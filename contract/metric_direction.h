// Which way each standard metric improves: the one declaration that nmctl best and compare, ASHA, TPE and the
// report's figures read, so that no place assumes "higher is better". A metric not declared here has no
// direction: whoever ranks by it must be told (`--maximize` / `--minimize`, `mode: max|min`). Standard
// library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_METRIC_DIRECTION_H_
#define NMSPARSE_CONTRACT_METRIC_DIRECTION_H_

#include <cmath>
#include <string>
#include <string_view>

#include "contract/metric_names.h"

namespace nmsparse::contract {

enum class MetricDirection { kUnknown, kMaximize, kMinimize };

struct DeclaredDirection {
  const char* metric;
  MetricDirection direction;
};

// The standard metrics of nmtrain's lines (contract/metric_names.h) that runs are ranked by.
constexpr DeclaredDirection kMetricDirections[] = {
    {kTop1, MetricDirection::kMaximize},       {kTop5, MetricDirection::kMaximize},
    {kBestTop1, MetricDirection::kMaximize},   {kLoss, MetricDirection::kMinimize},
    {kEvalLoss, MetricDirection::kMinimize},   {kEmaTop1, MetricDirection::kMaximize},
    {kEmaTop5, MetricDirection::kMaximize},    {kEmaEvalLoss, MetricDirection::kMinimize},
    {kDeployTop1, MetricDirection::kMaximize}, {kEmaDeployTop1, MetricDirection::kMaximize},
};

// The declared direction of `metric`, kUnknown when it has none.
inline MetricDirection DirectionOf(std::string_view metric) {
  for (const DeclaredDirection& d : kMetricDirections) {
    if (metric == d.metric) return d.direction;
  }
  return MetricDirection::kUnknown;
}

// Whether value `a` ranks before (is better than) `b` for a metric that improves upwards (`maximize`) or
// downwards. A non-finite value (NaN or an infinity, from a run that diverged or a store written before the
// gateway refused them) ranks after every finite one, and non-finite values tie: every ranking (best,
// compare, ASHA, TPE, the report) orders them as worst, and std::sort gets the strict weak order it needs
// (NaN alone breaks `<`).
inline bool RanksBefore(double a, double b, bool maximize) {
  const bool a_finite = std::isfinite(a), b_finite = std::isfinite(b);
  if (a_finite != b_finite) return a_finite;
  if (!a_finite) return false;
  return maximize ? a > b : a < b;
}

// For messages, from the table: "top1 up, top5 up, best_top1 up, loss down, eval_loss down, ...".
inline std::string DeclaredDirectionsText() {
  std::string text;
  for (const DeclaredDirection& d : kMetricDirections) {
    if (!text.empty()) text += ", ";
    text += d.metric;
    text += d.direction == MetricDirection::kMaximize ? " up" : " down";
  }
  return text;
}

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_METRIC_DIRECTION_H_
