#include "report/figures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "contract/metric_direction.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "report/compare_pivot.h"
#include "report/curve_groups.h"
#include "report/file_name_part.h"
#include "report/pareto.h"
#include "report/replicates.h"
#include "report/run_facts.h"
#include "report/run_marks_cap.h"
#include "report/sample_stats.h"
#include "report/search_views.h"
#include "schemas/recipe.h"

namespace nmsparse::report {
namespace {

// A figure's id is its file's stem: the metric's part of it is kept to a file name's piece.
constexpr size_t kMaxMetricInFileName = 64;

// A point of `kind` in the run's curve, as (x, y); false when it lacks the value.
bool PointXY(const v1::MetricPoint& p, const std::string& key, bool x_is_step, double* x, double* y) {
  auto it = p.values().find(key);
  if (it == p.values().end() || !std::isfinite(it->second)) return false;
  // An epoch line carries the 0-based index of the epoch it ends: drawn as epochs done, 1 to N.
  *x = x_is_step ? static_cast<double>(p.step()) : static_cast<double>(p.epoch()) + 1;
  *y = it->second;
  return true;
}

Series CurveOf(const RunData& run, const std::string& kind, const std::string& key, bool x_is_step) {
  Series s{RunName(run.run), Series::Style::kLines, {}, {}, {}};
  for (const v1::MetricPoint& p : run.curve) {
    double x = 0, y = 0;
    if (p.kind() == kind && PointXY(p, key, x_is_step, &x, &y)) {
      s.x.push_back(x);
      s.y.push_back(y);
      s.run_ids.push_back(run.run.id());
    }
  }
  return s;
}

// Index of the series named `name` in `figure`, appending an empty one of `style` when new: recipes keep
// their order of first appearance.
Series& SeriesNamed(Figure* figure, const std::string& name, Series::Style style) {
  for (Series& s : figure->series) {
    if (s.name == name) return s;
  }
  figure->series.push_back(Series{name, style, {}, {}, {}});
  return figure->series.back();
}

// True for a grid axis that is a per-run setting worth a figure of its own: two or more values, every label a
// number, not a replicate (seeds are bars, not x) and not N:M (the density figure's x); `values` its numbers.
bool NumericPerRunAxis(const v1::GridAxis& axis, std::vector<double>* values) {
  if (axis.values_size() < 2 || IsReplicateAxis(axis)) return false;
  for (const v1::AxisValue& v : axis.values()) {
    if (v.set().count("sparsity.n_sparsity") || v.set().count("sparsity.m_sparsity")) return false;
    double x = 0;
    if (!absl::SimpleAtod(v.label(), &x) || !std::isfinite(x)) return false;
    values->push_back(x);
  }
  return true;
}

// Positive values spanning two decades or more (learning rates, decay coefficients) get a log x axis.
bool LogScaled(const std::vector<double>& values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *lo > 0 && *hi / *lo >= 100;
}

// An axis name as a figure id's part: [a-z0-9_] ("sparsity.decay_coef" -> "sparsity_decay_coef").
std::string AxisIdPart(const std::string& name) {
  std::string out;
  for (char c : FileNamePart(name, kMaxMetricInFileName))
    out += absl::ascii_isalnum(c) ? absl::ascii_tolower(c) : '_';
  return out;
}

// The distinct finite x values of a figure's series.
size_t DistinctX(const Figure& f) {
  std::set<double> xs;
  for (const Series& s : f.series) {
    for (double x : s.x) {
      if (std::isfinite(x)) xs.insert(x);
    }
  }
  return xs.size();
}

}  // namespace

std::string RunName(const v1::Run& run) { return RunLabel(run); }

Figure LossCurves(const SweepData& data) {
  Figure f{"curves_loss",
           "Train loss per run",
           "Training loss per run: its step lines, or its epochs' mean loss when it reported no step lines.",
           "step",
           "train loss",
           false,
           {}};
  std::vector<RunCurve> curves;
  for (const RunData& run : data.runs) {
    Series s = CurveOf(run, contract::kKindStep, contract::kLoss, /*x_is_step=*/true);
    if (s.x.empty()) s = CurveOf(run, contract::kKindEpoch, contract::kLoss, /*x_is_step=*/true);
    if (!s.x.empty()) curves.push_back({&run.run, std::move(s)});
  }
  AddRunCurves(std::move(curves), contract::kLoss, ReplicateAxes(data.sweep.spec()), &f);
  return f;
}

Figure EvalCurves(const SweepData& data, const std::string& metric) {
  Figure f{"curves_" + FileNamePart(metric, kMaxMetricInFileName),
           "Evaluation " + metric + " per run",
           "The evaluation metric at the end of each epoch, per run.",
           "epoch",
           metric,
           false,
           {}};
  std::vector<RunCurve> curves;
  for (const RunData& run : data.runs) {
    Series s = CurveOf(run, contract::kKindEpoch, metric, /*x_is_step=*/false);
    if (!s.x.empty()) curves.push_back({&run.run, std::move(s)});
  }
  AddRunCurves(std::move(curves), metric, ReplicateAxes(data.sweep.spec()), &f);
  return f;
}

Figure MetricVsDensity(const SweepData& data, const std::string& metric) {
  Figure f{FileNamePart(metric, kMaxMetricInFileName) + "_vs_density",
           "Final " + metric + " vs density N/M",
           "Per recipe, the mean over the succeeded runs with the same N:M (seeds, random draws); bars are "
           "\u00b1 one sample standard deviation.",
           "density N/M",
           "final " + metric,
           false,
           {}};
  std::vector<std::string> recipes;
  std::map<std::string, std::map<double, ComparePivot::Cell>> cells;
  for (const RunData& run : data.runs) {
    const double value = FinalMetric(run.run, metric);
    if (!std::isfinite(value)) continue;
    const SparsityConfig sparsity = RunSparsity(run.run);
    const std::string recipe = RecipeOf(sparsity);
    if (!cells.count(recipe)) recipes.push_back(recipe);
    cells[recipe][DensityOf(sparsity)].values.push_back(value);
  }
  for (const std::string& recipe : recipes) {
    Series& s = SeriesNamed(&f, recipe, Series::Style::kErrorBars);
    for (const auto& [density, cell] : cells[recipe]) {
      s.x.push_back(density);
      s.y.push_back(cell.mean());
      s.err.push_back(cell.stddev());
    }
  }
  return f;
}

std::vector<Figure> MetricVsAxes(const SweepData& data, const std::string& metric) {
  std::vector<Figure> out;
  const std::vector<std::string> replicates = ReplicateAxes(data.sweep.spec());
  for (const v1::GridAxis& axis : data.sweep.spec().grid()) {
    std::vector<double> values;
    if (!NumericPerRunAxis(axis, &values)) continue;
    const bool log = LogScaled(values);
    Figure f{
        FileNamePart(metric, kMaxMetricInFileName) + "_vs_" + AxisIdPart(axis.name()),
        "Final " + metric + " vs " + axis.name(),
        "One line per configuration without " + axis.name() +
            " (coloured by recipe): the mean over the succeeded runs that differ only in a replicate axis "
            "(seed); bars are \u00b1 one sample standard deviation over them.",
        axis.name(),
        "final " + metric,
        log,
        {}};
    std::vector<std::string> ignored = replicates;
    ignored.push_back(axis.name());
    // [line][x] -> the runs' values.
    std::vector<std::string> lines;
    std::map<std::string, std::pair<std::string, std::map<double, std::vector<double>>>> cells;
    for (const RunData& run : data.runs) {
      const double value = FinalMetric(run.run, metric);
      auto label = run.run.labels().find(axis.name());
      double x = 0;
      if (!std::isfinite(value) || label == run.run.labels().end() || !absl::SimpleAtod(label->second, &x))
        continue;
      std::string line = ConfigurationOf(run.run, ignored);
      const std::string recipe = RecipeOf(RunSparsity(run.run));
      if (line.empty()) line = recipe;
      if (!cells.count(line)) lines.push_back(line);
      cells[line].first = recipe;
      cells[line].second[x].push_back(value);
    }
    for (const std::string& line : lines) {
      Series s{line, Series::Style::kErrorBars, {}, {}, {}};
      s.group = cells[line].first;
      for (const auto& [x, ys] : cells[line].second) {
        s.x.push_back(x);
        s.y.push_back(Mean(ys));
        s.err.push_back(SampleStd(ys));
      }
      f.series.push_back(std::move(s));
    }
    out.push_back(std::move(f));
  }
  return out;
}

Figure MetricVsFlops(const SweepData& data, const std::string& metric, bool training) {
  const std::string what = training ? "training FLOPs" : "inference FLOPs per image";
  Figure f{
      FileNamePart(metric, kMaxMetricInFileName) + (training ? "_vs_train_flops" : "_vs_inference_flops"),
      "Final " + metric + " vs " + what,
      training ? "One point per succeeded run (FLOPs as the trainer counts them, dense-equivalent); the "
                 "line joins the Pareto front (no run is cheaper and better; better by the metric's declared "
                 "direction)."
               : "One point per succeeded run (forward FLOPs of one image less the pruned weights' "
                 "share); the line joins the Pareto front.",
      what,
      "final " + metric,
      true,
      {}};
  const contract::MetricDirection direction = contract::DirectionOf(metric);
  std::vector<CostQuality> points;
  std::vector<double> values;
  for (const RunData& run : data.runs) {
    const double value = FinalMetric(run.run, metric);
    const double flops = training ? TrainingFlops(run.run) : InferenceFlops(run.run);
    if (!std::isfinite(value) || !std::isfinite(flops) || flops <= 0) continue;
    Series& s = SeriesNamed(&f, RecipeOf(RunSparsity(run.run)), Series::Style::kPoints);
    s.x.push_back(flops);
    s.y.push_back(value);
    s.run_ids.push_back(run.run.id());
    values.push_back(value);
    // The front wants higher quality: a metric declared lower-is-better (a loss) is negated for it.
    points.push_back({flops, direction == contract::MetricDirection::kMinimize ? -value : value});
  }
  // A metric without a declared direction has no "better", so no front.
  if (points.empty() || direction == contract::MetricDirection::kUnknown) return f;
  Series front{"Pareto front", Series::Style::kFront, {}, {}, {}};
  for (size_t i : ParetoFront(points)) {
    front.x.push_back(points[i].cost);
    front.y.push_back(values[i]);
  }
  f.series.push_back(std::move(front));
  return f;
}

Figure MetricVsParameters(const SweepData& data, const std::string& metric) {
  Figure f{FileNamePart(metric, kMaxMetricInFileName) + "_vs_params",
           "Final " + metric + " vs parameters",
           "One point per succeeded run at the model's parameter count as the trainer reports it (dense, as "
           "timm counts them), one series per recipe: accuracy against model size.",
           "parameters",
           "final " + metric,
           true,
           {}};
  for (const RunData& run : data.runs) {
    const double value = FinalMetric(run.run, metric);
    const double params = ReportedParameters(run.run);
    if (!std::isfinite(value) || !std::isfinite(params) || params <= 0) continue;
    Series& s = SeriesNamed(&f, RecipeOf(RunSparsity(run.run)), Series::Style::kPoints);
    s.x.push_back(params);
    s.y.push_back(value);
    s.run_ids.push_back(run.run.id());
  }
  return f;
}

Figure FlipRateCurves(const SweepData& data) {
  // Against step when some run logged flip rates at step points (schedule.log_every_steps): a run of few
  // epochs is then a curve, not a point or two. Each run gives its step points, or its epoch points at the
  // step they end.
  const auto has_step_points = [](const RunData& run) {
    return std::any_of(run.curve.begin(), run.curve.end(), [](const v1::MetricPoint& p) {
      return p.kind() == contract::kKindStep && p.values().count(contract::kFlipRate) > 0;
    });
  };
  const bool by_step = std::any_of(data.runs.begin(), data.runs.end(), has_step_points);
  Figure f{"diagnostics_flip_rate",
           "Mask flip rate per run",
           by_step ? "Share of the sparse layers' mask entries that changed since the previous log point, at "
                     "every log point (SR-STE's flip rate)."
                   : "Share of the sparse layers' mask entries that changed since the previous log point, at "
                     "the end of each epoch (SR-STE's flip rate).",
           by_step ? "step" : "epoch",
           "flip rate",
           false,
           {}};
  std::vector<RunCurve> curves;
  for (const RunData& run : data.runs) {
    Series s = CurveOf(run, by_step && has_step_points(run) ? contract::kKindStep : contract::kKindEpoch,
                       contract::kFlipRate, /*x_is_step=*/by_step);
    if (!s.x.empty()) curves.push_back({&run.run, std::move(s)});
  }
  AddRunCurves(std::move(curves), contract::kFlipRate, ReplicateAxes(data.sweep.spec()), &f);
  return f;
}

Figure PrunedKeptGradientCurves(const SweepData& data) {
  Figure f{"diagnostics_gradient_ratio",
           "Gradient reaching pruned vs kept weights per run",
           "L2 norm of dL/dW at pruned weights over that at kept weights, at each epoch's last step: the "
           "gradient flow that MDGF and SDGF decay.",
           "epoch",
           "|g| pruned / |g| kept",
           false,
           {}};
  std::vector<RunCurve> curves;
  for (const RunData& run : data.runs) {
    Series s{RunName(run.run), Series::Style::kLines, {}, {}, {}};
    for (const v1::MetricPoint& p : run.curve) {
      double x = 0, pruned = 0, kept = 0;
      if (p.kind() == contract::kKindEpoch && PointXY(p, contract::kGradNormPruned, false, &x, &pruned) &&
          PointXY(p, contract::kGradNormKept, false, &x, &kept) && kept > 0) {
        s.x.push_back(x);
        s.y.push_back(pruned / kept);
        s.run_ids.push_back(run.run.id());
      }
    }
    if (!s.x.empty()) curves.push_back({&run.run, std::move(s)});
  }
  AddRunCurves(std::move(curves), /*metric=*/"", ReplicateAxes(data.sweep.spec()), &f);
  return f;
}

std::vector<Figure> SweepFigures(const SweepData& data, const std::string& metric) {
  std::vector<Figure> figures = {LossCurves(data), EvalCurves(data, metric)};
  // A final metric against an x that has one value says nothing (every run the same size, one density); a
  // figure of no point yet stays, an empty frame that fills as runs end (the dashboard of a live sweep).
  std::vector<Figure> finals = {MetricVsDensity(data, metric), MetricVsFlops(data, metric, /*training=*/true),
                                MetricVsFlops(data, metric, /*training=*/false),
                                MetricVsParameters(data, metric)};
  for (Figure& f : MetricVsAxes(data, metric)) finals.push_back(std::move(f));
  for (Figure& f : finals) {
    if (DistinctX(f) != 1) figures.push_back(std::move(f));
  }
  figures.push_back(FlipRateCurves(data));
  figures.push_back(PrunedKeptGradientCurves(data));
  for (Figure& f : SearchViews(data, metric)) figures.push_back(std::move(f));
  CapRunMarks(data, metric, kMaxRunMarks, figures);
  return figures;
}

}  // namespace nmsparse::report
