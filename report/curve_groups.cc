#include "report/curve_groups.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "contract/metric_direction.h"
#include "report/run_facts.h"
#include "schemas/recipe.h"

namespace nmsparse::report {
namespace {

// Mean ± sample std of every group's runs at each x the group's runs share, thinned to kMaxGroupPoints.
Series GroupLine(const std::string& group, const std::vector<const RunCurve*>& members) {
  std::map<double, std::vector<double>> at;
  for (const RunCurve* c : members) {
    for (size_t i = 0; i < c->series.x.size(); ++i) at[c->series.x[i]].push_back(c->series.y[i]);
  }
  Series s{absl::StrCat(group, " mean \u00b1 std (", members.size(), " runs)"),
           Series::Style::kErrorBars,
           {},
           {},
           {}};
  const size_t stride = (at.size() + kMaxGroupPoints - 1) / kMaxGroupPoints;
  size_t i = 0;
  for (const auto& [x, ys] : at) {
    if (i++ % stride != 0 && i != at.size()) continue;
    double sum = 0, squares = 0;
    for (double y : ys) sum += y;
    const double mean = sum / ys.size();
    for (double y : ys) squares += (y - mean) * (y - mean);
    s.x.push_back(x);
    s.y.push_back(mean);
    s.err.push_back(ys.size() > 1 ? std::sqrt(squares / (ys.size() - 1)) : 0.0);
  }
  return s;
}

// The curves with the best last value by `metric`'s direction, best first; none for an undeclared one.
std::vector<const RunCurve*> TopRuns(const std::vector<RunCurve>& curves, const std::string& metric) {
  const contract::MetricDirection direction = contract::DirectionOf(metric);
  std::vector<const RunCurve*> out;
  if (direction == contract::MetricDirection::kUnknown) return out;
  for (const RunCurve& c : curves) {
    if (!c.series.y.empty() && std::isfinite(c.series.y.back())) out.push_back(&c);
  }
  const bool higher = direction == contract::MetricDirection::kMaximize;
  std::stable_sort(out.begin(), out.end(), [higher](const RunCurve* a, const RunCurve* b) {
    return higher ? a->series.y.back() > b->series.y.back() : a->series.y.back() < b->series.y.back();
  });
  if (out.size() > kTopRunCurves) out.resize(kTopRunCurves);
  return out;
}

}  // namespace

std::string CurveGroupOf(const v1::Run& run) {
  const SparsityConfig s = RunSparsity(run);
  const bool nm = s.sparsity_type == SparsityType::kStructuredNM || s.sparsity_type == SparsityType::kSrste ||
                  s.sparsity_type == SparsityType::kSste;  // Dense and unstructured runs ignore their N:M.
  return nm ? absl::StrCat(RecipeOf(s), " ", s.nm.n, ":", s.nm.m) : RecipeOf(s);
}

void AddRunCurves(std::vector<RunCurve> curves, const std::string& metric, Figure* figure) {
  if (curves.size() <= kMaxRunCurves) {
    for (RunCurve& c : curves) figure->series.push_back(std::move(c.series));
    return;
  }
  std::vector<std::string> order;  // Groups in order of first appearance.
  std::map<std::string, std::vector<const RunCurve*>> groups;
  for (const RunCurve& c : curves) {
    const std::string group = CurveGroupOf(*c.run);
    if (!groups.count(group)) order.push_back(group);
    groups[group].push_back(&c);
  }
  for (const std::string& group : order) figure->series.push_back(GroupLine(group, groups[group]));
  const std::vector<const RunCurve*> top = TopRuns(curves, metric);
  for (size_t rank = 0; rank < top.size(); ++rank) {
    Series s = top[rank]->series;
    s.name = absl::StrCat("#", rank + 1, " ", s.name);
    s.run_ids.assign(s.x.size(), top[rank]->run->id());
    figure->series.push_back(std::move(s));
  }
  absl::StrAppend(&figure->caption, " ", curves.size(),
                  " runs: the mean \u00b1 sample std of each recipe x N:M", " group",
                  top.empty() ? "" : absl::StrCat(", and the ", top.size(), " runs best at their last point"),
                  ".");
}

}  // namespace nmsparse::report
