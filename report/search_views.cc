#include "report/search_views.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "contract/metric_direction.h"
#include "report/compare_pivot.h"
#include "report/file_name_part.h"
#include "report/param_importance.h"
#include "report/replicates.h"
#include "report/run_facts.h"
#include "report/sample_stats.h"

namespace nmsparse::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kMaxNameInFileName = 64;
// A random integer axis over at most this many whole numbers gets a tick at each.
constexpr double kMaxIntegerTicks = 20;

// The declared direction of `metric`, else the search's mode when the search ranks by it.
contract::MetricDirection DirectionFor(const v1::SweepSpec& spec, const std::string& metric) {
  const contract::MetricDirection declared = contract::DirectionOf(metric);
  if (declared != contract::MetricDirection::kUnknown || spec.search().metric() != metric) return declared;
  if (spec.search().mode() == "max") return contract::MetricDirection::kMaximize;
  if (spec.search().mode() == "min") return contract::MetricDirection::kMinimize;
  return contract::MetricDirection::kUnknown;
}

double Number(const std::string& text) {
  double v = 0;
  return absl::SimpleAtod(text, &v) && std::isfinite(v) ? v : kNaN;
}

// A run's label of `p` on p's scale.
double ValueOn(const SweptParameter& p, const std::string& label) {
  if (!p.categories.empty()) {
    auto it = std::find(p.categories.begin(), p.categories.end(), label);
    return it == p.categories.end() ? kNaN : static_cast<double>(it - p.categories.begin());
  }
  const double v = Number(label);
  if (!p.log) return v;
  return v > 0 ? std::log10(v) : kNaN;
}

bool Varies(const std::vector<double>& values) {
  std::set<double> distinct;
  for (double v : values) {
    if (std::isfinite(v)) distinct.insert(v);
  }
  return distinct.size() >= 2;
}

// The parameters that vary among the trials, and the trials.
struct Study {
  std::vector<SweptParameter> params;
  Trials trials;
};

Study StudyOf(const SweepData& data, const std::string& metric) {
  const std::vector<SweptParameter> all = SweptParameters(data.sweep.spec());
  const Trials trials = TrialsOf(data, all, metric);
  Study study;
  study.trials.run_ids = trials.run_ids;
  study.trials.objective = trials.objective;
  study.trials.spread = trials.spread;
  study.trials.replicates = trials.replicates;
  for (size_t p = 0; p < all.size(); ++p) {
    if (!Varies(trials.values[p])) continue;
    study.params.push_back(all[p]);
    study.trials.values.push_back(trials.values[p]);
  }
  return study;
}

// What a caption adds when trials pool replicates.
std::string ReplicatesNote(const Trials& t, const std::string& replicate_axes) {
  if (!t.any_replicates()) return "";
  return absl::StrCat(" Runs that differ only in ", replicate_axes,
                      " are one configuration: its mean, with bars of \u00b1 one sample std over them.");
}

std::string ReplicateAxesText(const SweepData& data) {
  std::string out;
  for (const std::string& axis : ReplicateAxes(data.sweep.spec()))
    absl::StrAppend(&out, out.empty() ? "" : ", ", axis);
  return out.empty() ? "seed" : out;
}

// A value on p's scale as its label would read (a log parameter's value back from log10).
double Shown(const SweptParameter& p, double v) { return p.log ? std::pow(10.0, v) : v; }

std::string Stem(const std::string& metric) { return FileNamePart(metric, kMaxNameInFileName); }

// A parameter's part of a slice's id: its place among the parameters (unique) and its name in [a-z0-9_],
// which the dashboard's figure route accepts ("optimizer.lr" -> "1_optimizer_lr").
std::string SliceIdPart(size_t index, const std::string& name) {
  std::string part = absl::StrCat(index, "_");
  for (char c : FileNamePart(name, kMaxNameInFileName)) {
    part += absl::ascii_isalnum(c) ? absl::ascii_tolower(c) : '_';
  }
  return part;
}

}  // namespace

std::vector<SweptParameter> SweptParameters(const v1::SweepSpec& spec) {
  std::vector<SweptParameter> out;
  for (const v1::GridAxis& axis : spec.grid()) {
    if (axis.values_size() < 2 || IsReplicateAxis(axis)) continue;
    SweptParameter p;
    p.name = axis.name();
    std::vector<double> numbers;
    for (const v1::AxisValue& v : axis.values()) {
      p.categories.push_back(v.label());
      numbers.push_back(Number(v.label()));
    }
    if (std::all_of(numbers.begin(), numbers.end(), [](double v) { return std::isfinite(v); })) {
      p.categories.clear();
      p.ticks = numbers;
      std::sort(p.ticks.begin(), p.ticks.end());
      p.ticks.erase(std::unique(p.ticks.begin(), p.ticks.end()), p.ticks.end());
      p.low = *std::min_element(numbers.begin(), numbers.end());
      p.high = *std::max_element(numbers.begin(), numbers.end());
    } else {
      p.low = -0.5;
      p.high = static_cast<double>(p.categories.size()) - 0.5;
    }
    out.push_back(std::move(p));
  }
  for (const v1::RandomAxis& axis : spec.random()) {
    if (axis.key() == "seed") continue;  // A replicate (replicates.h).
    SweptParameter p;
    p.name = axis.key();
    if (axis.choices_size() > 0) {
      p.categories.assign(axis.choices().begin(), axis.choices().end());
      p.low = -0.5;
      p.high = static_cast<double>(p.categories.size()) - 0.5;
    } else {
      p.log = axis.log() && axis.min() > 0;
      p.low = p.log ? std::log10(axis.min()) : axis.min();
      p.high = p.log ? std::log10(axis.max()) : axis.max();
      if (axis.integer() && !p.log && axis.max() - axis.min() <= kMaxIntegerTicks) {
        for (double v = std::ceil(axis.min()); v <= axis.max(); ++v) p.ticks.push_back(v);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

bool Trials::any_replicates() const {
  return std::any_of(replicates.begin(), replicates.end(), [](int n) { return n > 1; });
}

Trials TrialsOf(const SweepData& data, const std::vector<SweptParameter>& params, const std::string& metric) {
  std::vector<const v1::Run*> runs;
  for (const RunData& r : data.runs) {
    if (std::isfinite(FinalMetric(r.run, metric))) runs.push_back(&r.run);
  }
  std::stable_sort(runs.begin(), runs.end(), [](const v1::Run* a, const v1::Run* b) {
    return std::make_pair(a->finished_at_ms(), a->id()) < std::make_pair(b->finished_at_ms(), b->id());
  });
  Trials t;
  t.values.resize(params.size());
  for (const Configuration& c : GroupByConfiguration(runs, ReplicateAxes(data.sweep.spec()))) {
    const v1::Run& first = *runs[c.members.front()];
    std::vector<double> objective;
    for (size_t i : c.members) objective.push_back(FinalMetric(*runs[i], metric));
    t.run_ids.push_back(first.id());
    t.objective.push_back(Mean(objective));
    t.spread.push_back(SampleStd(objective));
    t.replicates.push_back(static_cast<int>(objective.size()));
    for (size_t p = 0; p < params.size(); ++p) {
      auto label = first.labels().find(params[p].name);
      t.values[p].push_back(label == first.labels().end() ? kNaN : ValueOn(params[p], label->second));
    }
  }
  return t;
}

Figure OptimisationHistory(const SweepData& data, const std::string& metric) {
  const contract::MetricDirection direction = DirectionFor(data.sweep.spec(), metric);
  Figure f{
      "search_history_" + Stem(metric),
      "Optimisation history of " + metric,
      direction == contract::MetricDirection::kUnknown
          ? "Each succeeded run's final metric by the order runs finished; no best-so-far line: the "
            "metric has no declared direction."
          : absl::StrCat("Each succeeded run's final metric by the order runs finished (trial number); the "
                         "line is the best so far (",
                         direction == contract::MetricDirection::kMaximize ? "highest" : "lowest", ")."),
      "trial (order finished)",
      "final " + metric,
      false,
      {}};
  const Trials t = TrialsOf(data, {}, metric);
  f.caption += ReplicatesNote(t, ReplicateAxesText(data));
  Series points{
      "objective", Series::Style::kPoints, {}, {}, t.any_replicates() ? t.spread : std::vector<double>{},
      t.run_ids};
  Series best{"best so far", Series::Style::kLines, {}, {}, {}, {}};
  for (size_t i = 0; i < t.objective.size(); ++i) {
    points.x.push_back(static_cast<double>(i + 1));
    points.y.push_back(t.objective[i]);
    if (direction == contract::MetricDirection::kUnknown) continue;
    const bool better = best.y.empty() ||
                        (direction == contract::MetricDirection::kMaximize ? t.objective[i] > best.y.back()
                                                                           : t.objective[i] < best.y.back());
    best.x.push_back(static_cast<double>(i + 1));
    best.y.push_back(better ? t.objective[i] : best.y.back());
    best.run_ids.push_back(better || best.run_ids.empty() ? t.run_ids[i] : best.run_ids.back());
  }
  f.series.push_back(std::move(points));
  if (!best.x.empty()) f.series.push_back(std::move(best));
  return f;
}

Figure ParallelCoordinates(const SweepData& data, const std::string& metric) {
  Figure f{"search_parallel_" + Stem(metric),
           "Parameters and " + metric + " per run",
           "One line per succeeded run through its value of each swept parameter (log axes for log-uniform "
           "ones, categorical ones by their labels) and its final metric, the last axis.",
           "",
           "",
           false,
           {}};
  f.kind = Figure::Kind::kParallelCoordinates;
  Study s = StudyOf(data, metric);
  for (size_t p = 0; p < s.params.size(); ++p) {
    std::vector<double> values;  // A log axis takes the values themselves, as the slices do.
    for (double v : s.trials.values[p]) values.push_back(Shown(s.params[p], v));
    f.dimensions.push_back(
        {s.params[p].name, s.params[p].log, values, s.params[p].categories, s.params[p].ticks});
  }
  if (s.trials.any_replicates()) {
    const std::string over = ReplicateAxesText(data);
    f.caption =
        absl::StrCat("One line per configuration (its runs differ only in ", over,
                     ") through its value of each swept parameter, the sample std of its runs' final metric "
                     "over ",
                     over, ", and their mean, the last axis.");
    f.dimensions.push_back({absl::StrCat(metric, " std over ", over), false, s.trials.spread, {}, {}});
    f.dimensions.push_back({absl::StrCat("mean final ", metric), false, s.trials.objective, {}, {}});
  } else {
    f.dimensions.push_back({"final " + metric, false, s.trials.objective, {}, {}});
  }
  f.run_ids = s.trials.run_ids;
  return f;
}

std::vector<Figure> Slices(const SweepData& data, const std::string& metric) {
  const Study s = StudyOf(data, metric);
  std::vector<Figure> out;
  for (size_t p = 0; p < s.params.size(); ++p) {
    const SweptParameter& param = s.params[p];
    Figure f{"search_slice_" + Stem(metric) + "_" + SliceIdPart(p, param.name),
             metric + " vs " + param.name,
             param.categories.empty()
                 ? "One point per succeeded run: its final metric against its value of the parameter."
                 : "One point per succeeded run: its final metric against its value of the parameter, a "
                   "category (x is the category's place in the sweep's list).",
             param.name,
             "final " + metric,
             param.log,
             {}};
    f.caption += ReplicatesNote(s.trials, ReplicateAxesText(data));
    const bool pooled = s.trials.any_replicates();
    Series points{pooled ? "configurations" : "runs", Series::Style::kPoints, {}, {}, {}, {}};
    for (size_t i = 0; i < s.trials.objective.size(); ++i) {
      const double v = s.trials.values[p][i];
      if (!std::isfinite(v)) continue;
      points.x.push_back(Shown(param, v));
      points.y.push_back(s.trials.objective[i]);
      if (pooled) points.err.push_back(s.trials.spread[i]);
      points.run_ids.push_back(s.trials.run_ids[i]);
      if (!param.categories.empty()) points.categories.push_back(param.categories[static_cast<size_t>(v)]);
    }
    f.series.push_back(std::move(points));
    out.push_back(std::move(f));
  }
  return out;
}

Figure Importances(const SweepData& data, const std::string& metric) {
  Figure f{"search_importance_" + Stem(metric),
           "Parameter importance for " + metric,
           "fANOVA over a random forest of 64 trees (as Optuna's default evaluator): the share of the "
           "objective's variance each parameter explains alone, normalised to sum 1 (docs/sweeps.md, "
           "\"Search views\").",
           "parameter",
           "importance",
           false,
           {}};
  const Study s = StudyOf(data, metric);
  if (s.trials.any_replicates()) {
    absl::StrAppend(&f.caption, " Each configuration counts once, at its mean over ", ReplicateAxesText(data),
                    ": a seed is a replicate, not a parameter.");
  }
  ImportanceInput in;
  for (const SweptParameter& p : s.params) in.bounds.push_back({p.low, p.high});
  for (size_t i = 0; i < s.trials.objective.size(); ++i) {
    std::vector<double> row;
    for (const std::vector<double>& values : s.trials.values) row.push_back(values[i]);
    // A run without a value of some parameter cannot be placed in the space: left out of the forest.
    if (std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); })) {
      in.rows.push_back(std::move(row));
      in.objective.push_back(s.trials.objective[i]);
    }
  }
  const std::vector<double> importance = FanovaImportances(in);
  std::vector<size_t> order(importance.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return importance[a] > importance[b]; });
  Series bars{"importance", Series::Style::kBars, {}, {}, {}, {}};
  for (size_t k = 0; k < order.size(); ++k) {
    bars.x.push_back(static_cast<double>(k));
    bars.y.push_back(importance[order[k]]);
    bars.categories.push_back(s.params[order[k]].name);
  }
  f.series.push_back(std::move(bars));
  return f;
}

std::vector<Figure> SearchViews(const SweepData& data, const std::string& metric) {
  if (SweptParameters(data.sweep.spec()).empty()) return {};
  const Study s = StudyOf(data, metric);
  if (s.trials.objective.size() < 2 || s.params.empty()) {
    return {
        Figure{"search_views_" + Stem(metric),
               "Search views of " + metric,
               absl::StrCat("The optimisation history, parallel coordinates, slices and importances need at "
                            "least 2 succeeded runs with a final ",
                            metric, " and a swept parameter that varies among them; this sweep has ",
                            s.trials.objective.size(), " such run", s.trials.objective.size() == 1 ? "" : "s",
                            s.params.empty() ? " and no parameter that varies." : "."),
               "",
               "",
               false,
               {}}};
  }
  std::vector<Figure> out = {OptimisationHistory(data, metric), ParallelCoordinates(data, metric)};
  for (Figure& f : Slices(data, metric)) out.push_back(std::move(f));
  out.push_back(Importances(data, metric));
  return out;
}

}  // namespace nmsparse::report
