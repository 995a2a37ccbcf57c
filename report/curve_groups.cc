#include "report/curve_groups.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "contract/metric_direction.h"
#include "report/replicates.h"
#include "report/run_facts.h"
#include "report/sample_stats.h"
#include "schemas/recipe.h"

namespace nmsparse::report {
namespace {

// Mean ± sample std of every group's runs at each x the group's runs share, thinned to kMaxGroupPoints.
Series GroupLine(const std::string& group, const std::vector<const RunCurve*>& members, Series::Style style) {
  std::map<double, std::vector<double>> at;
  for (const RunCurve* c : members) {
    for (size_t i = 0; i < c->series.x.size(); ++i) at[c->series.x[i]].push_back(c->series.y[i]);
  }
  Series s{absl::StrCat(group, " mean \u00b1 std (", members.size(), " runs)"), style, {}, {}, {}};
  const size_t stride = (at.size() + kMaxGroupPoints - 1) / kMaxGroupPoints;
  size_t i = 0;
  for (const auto& [x, ys] : at) {
    if (i++ % stride != 0 && i != at.size()) continue;
    s.x.push_back(x);
    s.y.push_back(Mean(ys));
    s.err.push_back(SampleStd(ys));
  }
  return s;
}

// One band per configuration (replicates.h) coloured by its recipe, and behind each, hidden, its runs' own
// lines under one legend entry.
void AddConfigurationBands(std::vector<RunCurve> curves, const std::vector<Configuration>& configurations,
                           const std::string& replicates, Figure* figure) {
  std::vector<Series> runs;
  for (const Configuration& c : configurations) {
    std::vector<const RunCurve*> members;
    for (size_t i : c.members) members.push_back(&curves[i]);
    const v1::Run& first = *members.front()->run;
    const std::string recipe = RecipeOf(RunSparsity(first));
    Series band = GroupLine(c.name.empty() ? CurveGroupOf(first) : c.name, members, Series::Style::kBand);
    band.group = recipe;
    for (const RunCurve* m : members) {
      Series line = m->series;
      line.group = recipe;
      line.hidden = true;
      line.legend_group = band.name + ": each run";
      runs.push_back(std::move(line));
    }
    figure->series.push_back(std::move(band));
  }
  for (Series& s : runs) figure->series.push_back(std::move(s));
  absl::StrAppend(
      &figure->caption, " Runs that differ only in ", replicates,
      " are one configuration: its mean, in its recipe's colour, with a band of \u00b1 one sample "
      "std over them; each run's own line is one legend click away.");
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
  const bool nm = IsNMSparsityType(s.sparsity_type);  // Dense and unstructured runs ignore their N:M.
  return nm ? absl::StrCat(RecipeOf(s), " ", s.nm.n, ":", s.nm.m) : RecipeOf(s);
}

void AddRunCurves(std::vector<RunCurve> curves, const std::string& metric,
                  const std::vector<std::string>& replicate_axes, Figure* figure) {
  std::vector<const v1::Run*> runs;
  for (const RunCurve& c : curves) runs.push_back(c.run);
  const std::vector<Configuration> configurations = GroupByConfiguration(runs, replicate_axes);
  if (HasReplicates(configurations) && configurations.size() <= kMaxRunCurves) {
    std::string replicates;
    for (const std::string& axis : replicate_axes)
      absl::StrAppend(&replicates, replicates.empty() ? "" : ", ", axis);
    AddConfigurationBands(std::move(curves), configurations, replicates, figure);
    return;
  }
  if (curves.size() <= kMaxRunCurves) {
    for (RunCurve& c : curves) {
      c.series.group = RecipeOf(RunSparsity(*c.run));
      figure->series.push_back(std::move(c.series));
    }
    return;
  }
  std::vector<std::string> order;  // Groups in order of first appearance.
  std::map<std::string, std::vector<const RunCurve*>> groups;
  for (const RunCurve& c : curves) {
    const std::string group = CurveGroupOf(*c.run);
    if (!groups.count(group)) order.push_back(group);
    groups[group].push_back(&c);
  }
  for (const std::string& group : order) {
    figure->series.push_back(GroupLine(group, groups[group], Series::Style::kErrorBars));
  }
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
