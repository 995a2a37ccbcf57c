#include "report/compare_pivot.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/metric_text.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "report/run_spec.h"
#include "report/sample_stats.h"
#include "schemas/experiment_config.h"

namespace nmsparse::report {
namespace {

// Index of `label` in `labels`, appending it when new (labels outside the spec's value list keep their order
// of appearance).
size_t IndexOf(std::vector<std::string>* labels, const std::string& label) {
  auto it = std::find(labels->begin(), labels->end(), label);
  if (it != labels->end()) return static_cast<size_t>(it - labels->begin());
  labels->push_back(label);
  return labels->size() - 1;
}

// Which state a cell without a succeeded run shows: activity first, then failure.
int StatePriority(v1::RunState state) {
  switch (state) {
    case v1::RUNNING:
      return 6;
    case v1::ASSIGNED:
      return 5;
    case v1::QUEUED:
      return 4;
    case v1::FAILED:
      return 3;
    case v1::CANCELLED:
    case v1::STOPPED_EARLY:
      return 2;
    case v1::SUCCEEDED:
      return 1;  // Succeeded without the metric.
    default:
      return 0;
  }
}

}  // namespace

std::string StoppedCellText(const ComparePivot::Cell& cell,
                            const std::function<std::string(double)>& number) {
  std::vector<double> values;
  uint32_t first = UINT32_MAX, last = 0;
  for (const auto& [value, epoch] : cell.stopped) {
    values.push_back(value);
    first = std::min(first, epoch);
    last = std::max(last, epoch);
  }
  // Epochs for people count from 1 (docs/nmctl.md).
  std::string text = absl::StrCat("stopped at epoch ", first + 1);
  if (last != first) absl::StrAppend(&text, "-", last + 1);
  absl::StrAppend(&text, ": ", number(Mean(values)));
  if (values.size() > 1) absl::StrAppend(&text, " (n=", values.size(), ")");
  return text;
}

namespace {

// A run counts with its final metric when it trained to the end: succeeded, or stopped early by ASHA after
// its final line (a stop at a rung kills the trainer before it writes one, so such a run has no final
// metrics).
bool FinishedWith(const v1::Run& run, bool has_metric) {
  return has_metric && (run.state() == v1::SUCCEEDED || run.state() == v1::STOPPED_EARLY);
}

std::string PendingText(const ComparePivot& pivot, const ComparePivot::Cell& cell) {
  if (cell.runs == 0) return "-";
  if (!cell.stopped.empty()) return StoppedCellText(cell, FormatMetric);
  return cell.pending == v1::SUCCEEDED ? "no " + pivot.metric
                                       : absl::AsciiStrToLower(v1::RunState_Name(cell.pending));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> OrderedLabels(const v1::Run& run) {
  std::vector<std::pair<std::string, std::string>> labels;
  for (const std::string& axis : run.label_axes()) {
    auto value = run.labels().find(axis);
    if (value != run.labels().end()) labels.emplace_back(axis, value->second);
  }
  if (labels.size() == static_cast<size_t>(run.labels().size())) return labels;
  labels.assign(run.labels().begin(), run.labels().end());
  std::sort(labels.begin(), labels.end());
  return labels;
}

std::string RunLabel(const v1::Run& run) {
  std::string out = absl::StrCat("run ", run.id());
  for (const auto& [axis, value] : OrderedLabels(run))
    absl::StrAppend(&out, " ", axis, "=", FormatLabelValue(value));
  return out;
}

std::string CellText(const ComparePivot& pivot, const ComparePivot::Cell& cell) {
  if (cell.succeeded() == 0) return PendingText(pivot, cell);
  std::string text = FormatMetric(cell.mean());
  if (cell.succeeded() > 1) {
    absl::StrAppend(&text, " \u00b1 ", FormatMetric(cell.stddev()), " (n=", cell.succeeded(), ")");
  }
  return text;
}

double ComparePivot::Cell::mean() const { return Mean(values); }

double ComparePivot::Cell::stddev() const { return SampleStd(values); }

bool IsReplicateAxis(const v1::GridAxis& axis) {
  return axis.values_size() > 0 &&
         std::all_of(axis.values().begin(), axis.values().end(), [](const v1::AxisValue& v) {
           return v.set_size() == 1 && v.set().begin()->first == "seed";
         });
}

namespace {

// The grid axes past the second that are (`replicates`) or are not replicates.
std::vector<std::string> AxesPastSecond(const v1::SweepSpec& spec, bool replicates) {
  std::vector<std::string> axes;
  for (int i = 2; i < spec.grid_size(); ++i) {
    if (IsReplicateAxis(spec.grid(i)) == replicates) axes.push_back(spec.grid(i).name());
  }
  return axes;
}

// True when the axis's values set N or M: its columns are headed by their runs' N:M.
bool SetsNm(const v1::GridAxis& axis) {
  return std::any_of(axis.values().begin(), axis.values().end(), [](const v1::AxisValue& v) {
    return v.set().count("sparsity.n_sparsity") > 0 || v.set().count("sparsity.m_sparsity") > 0;
  });
}

// "1:8" when the sparse runs of a column share one N:M, else empty (dense runs carry N:M keys they ignore).
std::string ColumnNm(const std::vector<const v1::Run*>& runs) {
  std::string nm;
  for (const v1::Run* run : runs) {
    if (!RunSpec(*run).ok()) continue;
    const SparsityConfig s = RunSparsity(*run);
    if (s.sparsity_type == SparsityType::kDense) continue;
    const std::string text = absl::StrCat(s.nm.n, ":", s.nm.m);
    if (!nm.empty() && nm != text) return "";
    nm = text;
  }
  return nm;
}

// The labels of `run` other than `row_axis`, sorted: what a paired difference matches on.
std::string PairKey(const v1::Run& run, const std::string& row_axis) {
  std::vector<std::pair<std::string, std::string>> labels(run.labels().begin(), run.labels().end());
  std::sort(labels.begin(), labels.end());
  std::string key;
  for (const auto& [axis, value] : labels) {
    if (axis != row_axis) absl::StrAppend(&key, axis, "=", value, "\n");
  }
  return key;
}

}  // namespace

std::vector<std::string> PooledGridAxes(const v1::SweepSpec& spec) { return AxesPastSecond(spec, false); }

std::vector<std::string> ReplicateGridAxes(const v1::SweepSpec& spec) { return AxesPastSecond(spec, true); }

namespace {

// "1:8" from the sweep's base and the axis value's overrides, for runs listed without their specs
// (ListRuns); the experiment's defaults (2:4) where neither says.
std::string SpecNm(const v1::SweepSpec& spec, const v1::AxisValue& value) {
  const absl::StatusOr<ExperimentConfig> base = ParseExperimentYaml(spec.base(), "base");
  const NM nm = base.ok() ? base->sparsity.nm : SparsityConfig().nm;
  const auto from = [&value](const char* key, int base_value) {
    auto it = value.set().find(key);
    int parsed = 0;
    if (it != value.set().end() && absl::SimpleAtoi(it->second, &parsed)) return parsed;
    return base_value;
  };
  return absl::StrCat(from("sparsity.n_sparsity", nm.n), ":", from("sparsity.m_sparsity", nm.m));
}

// Heads each column by its label, or by its runs' N:M when the column axis sets N or M.
void SetColumnHeaders(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs, ComparePivot* pivot) {
  pivot->column_headers = pivot->column_labels;
  if (spec.grid_size() < 2 || !SetsNm(spec.grid(1))) return;
  std::vector<std::vector<const v1::Run*>> by_column(pivot->column_labels.size());
  for (const v1::Run& run : runs) {
    auto label = run.labels().find(pivot->column_axis);
    if (label == run.labels().end()) continue;
    auto it = std::find(pivot->column_labels.begin(), pivot->column_labels.end(), label->second);
    if (it != pivot->column_labels.end()) by_column[it - pivot->column_labels.begin()].push_back(&run);
  }
  const v1::GridAxis& axis = spec.grid(1);
  for (size_t c = 0; c < by_column.size(); ++c) {
    const bool with_specs = std::any_of(by_column[c].begin(), by_column[c].end(),
                                        [](const v1::Run* r) { return RunSpec(*r).ok(); });
    std::string nm = ColumnNm(by_column[c]);
    if (!with_specs && c < static_cast<size_t>(axis.values_size())) nm = SpecNm(spec, axis.values(c));
    if (!nm.empty()) pivot->column_headers[c] = nm;
  }
}

}  // namespace

std::optional<std::pair<double, uint32_t>> LastEpochValue(const std::vector<v1::MetricPoint>& curve,
                                                          const std::string& metric) {
  for (auto p = curve.rbegin(); p != curve.rend(); ++p) {
    if (p->kind() != contract::kKindEpoch) continue;
    auto value = p->values().find(metric);
    if (value != p->values().end() && std::isfinite(value->second))
      return std::make_pair(value->second, p->epoch());
  }
  return std::nullopt;
}

ComparePivot BuildComparePivot(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                               const std::string& metric, const StoppedValues& stopped) {
  ComparePivot pivot;
  pivot.metric = metric;
  if (spec.grid_size() > 0) {
    pivot.row_axis = spec.grid(0).name();
    for (const v1::AxisValue& v : spec.grid(0).values()) pivot.row_labels.push_back(v.label());
  }
  if (spec.grid_size() > 1) {
    pivot.column_axis = spec.grid(1).name();
    for (const v1::AxisValue& v : spec.grid(1).values()) pivot.column_labels.push_back(v.label());
  } else {
    pivot.column_labels = {metric};
  }
  std::vector<std::vector<ComparePivot::Cell>>& cells = pivot.cells;
  for (const v1::Run& run : runs) {
    size_t row = 0, column = 0;
    if (pivot.row_axis.empty()) {
      row = IndexOf(&pivot.row_labels, RunLabel(run));
    } else {
      auto label = run.labels().find(pivot.row_axis);
      row = IndexOf(&pivot.row_labels, label == run.labels().end() ? "?" : label->second);
    }
    if (!pivot.column_axis.empty()) {
      auto label = run.labels().find(pivot.column_axis);
      column = IndexOf(&pivot.column_labels, label == run.labels().end() ? "?" : label->second);
    }
    if (cells.size() <= row) cells.resize(row + 1);
    if (cells[row].size() <= column) cells[row].resize(column + 1);
    ComparePivot::Cell& cell = cells[row][column];
    ++cell.runs;
    auto value = run.final_metrics().find(metric);
    // A non-finite value (stored before the gateway refused them) counts as no value: it would poison the
    // cell's mean, and it ranks worst everywhere else (contract::RanksBefore).
    const bool has_value = value != run.final_metrics().end() && std::isfinite(value->second);
    if (FinishedWith(run, has_value)) {
      cell.values.push_back(value->second);
      cell.pair_keys.push_back(PairKey(run, pivot.row_axis));
    } else {
      if (StatePriority(run.state()) > StatePriority(cell.pending)) cell.pending = run.state();
      auto at = stopped.find(run.id());
      if (run.state() == v1::STOPPED_EARLY && at != stopped.end()) cell.stopped.push_back(at->second);
    }
  }
  cells.resize(pivot.row_labels.size());
  for (auto& row : cells) row.resize(pivot.column_labels.size());
  SetColumnHeaders(spec, runs, &pivot);
  return pivot;
}

Json ComparePivotToJson(int64_t sweep_id, const ComparePivot& pivot) {
  Json doc = {{"sweep_id", sweep_id},           {"metric", pivot.metric},
              {"row_axis", pivot.row_axis},     {"column_axis", pivot.column_axis},
              {"columns", pivot.column_labels}, {"rows", Json::array()}};
  for (size_t r = 0; r < pivot.row_labels.size(); ++r) {
    Json cells = Json::array();
    for (size_t c = 0; c < pivot.column_labels.size(); ++c) {
      const ComparePivot::Cell& cell = pivot.cells[r][c];
      const bool any = cell.succeeded() > 0;
      cells.push_back({{"column", pivot.column_labels[c]},
                       {"n", cell.succeeded()},
                       {"mean", any ? Json(cell.mean()) : Json(nullptr)},
                       {"std", any ? Json(cell.stddev()) : Json(nullptr)},
                       {"values", cell.values},
                       {"runs", cell.runs},
                       {"state", any ? "succeeded" : PendingText(pivot, cell)}});
    }
    doc["rows"].push_back({{"label", pivot.row_labels[r]}, {"cells", std::move(cells)}});
  }
  return doc;
}

namespace {

bool Reports(const std::vector<v1::Run>& runs, const std::string& metric) {
  return std::any_of(runs.begin(), runs.end(),
                     [&](const v1::Run& run) { return run.final_metrics().count(metric) > 0; });
}

}  // namespace

std::vector<Counterpart> Counterparts(const std::vector<v1::Run>& runs, const std::string& metric) {
  static const std::vector<std::pair<std::string, Counterpart>> kPairs = {
      {contract::kTop1, {contract::kEmaTop1, "ema"}},
      {contract::kTop5, {contract::kEmaTop5, "ema"}},
      {contract::kEvalLoss, {contract::kEmaEvalLoss, "ema"}},
      {contract::kTop1, {contract::kDeployTop1, "deployable", true}},
      {contract::kTop1, {contract::kEmaDeployTop1, "ema deployable", true}},
      {contract::kEmaTop1, {contract::kEmaDeployTop1, "deployable", true}},
      {contract::kDeployTop1, {contract::kEmaDeployTop1, "ema", true}}};
  std::vector<Counterpart> out;
  for (const auto& [raw, counterpart] : kPairs) {
    if (raw == metric && Reports(runs, counterpart.metric)) out.push_back(counterpart);
  }
  return out;
}

std::string PaperTableMetric(const std::vector<v1::Run>& runs, const std::string& metric) {
  if (metric == contract::kTop1 && Reports(runs, contract::kDeployTop1)) return contract::kDeployTop1;
  if (metric == contract::kEmaTop1 && Reports(runs, contract::kEmaDeployTop1))
    return contract::kEmaDeployTop1;
  return metric;
}

std::string DeployableLegend(const std::string& metric, const std::vector<Counterpart>& counterparts) {
  const bool shown = metric == contract::kDeployTop1 || metric == contract::kEmaDeployTop1 ||
                     std::any_of(counterparts.begin(), counterparts.end(),
                                 [](const Counterpart& c) { return c.final_only; });
  if (!shown) return "";
  return absl::StrCat(
      contract::kDeployTop1,
      ": the deployable model, as nmtrain --export writes it (every sparse layer hard-masked at "
      "its target N:M, no decayed leak); ",
      contract::kTop1,
      ": the trained weights under the last step's rule (MDGF, SDGF: still leaking D(end) of "
      "every pruned weight)");
}

}  // namespace nmsparse::report
