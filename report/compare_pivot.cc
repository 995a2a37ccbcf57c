#include "report/compare_pivot.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/metric_text.h"
#include "contract/metric_names.h"

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

// A run counts with its final metric when it trained to the end: succeeded, or stopped early by ASHA after
// its final line (a stop at a rung kills the trainer before it writes one, so such a run has no final
// metrics).
bool FinishedWith(const v1::Run& run, bool has_metric) {
  return has_metric && (run.state() == v1::SUCCEEDED || run.state() == v1::STOPPED_EARLY);
}

std::string PendingText(const ComparePivot& pivot, const ComparePivot::Cell& cell) {
  if (cell.runs == 0) return "-";
  return cell.pending == v1::SUCCEEDED ? "no " + pivot.metric
                                       : absl::AsciiStrToLower(v1::RunState_Name(cell.pending));
}

}  // namespace

std::string RunLabel(const v1::Run& run) {
  std::vector<std::pair<std::string, std::string>> labels(run.labels().begin(), run.labels().end());
  std::sort(labels.begin(), labels.end());
  std::string out = absl::StrCat("run ", run.id());
  for (const auto& [axis, value] : labels) absl::StrAppend(&out, " ", axis, "=", value);
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

double ComparePivot::Cell::mean() const {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double ComparePivot::Cell::stddev() const {
  if (values.size() < 2) return 0.0;
  const double m = mean();
  double squares = 0.0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

std::vector<std::string> PooledGridAxes(const v1::SweepSpec& spec) {
  std::vector<std::string> pooled;
  for (int i = 2; i < spec.grid_size(); ++i) {
    const v1::GridAxis& axis = spec.grid(i);
    const bool seeds_only = std::all_of(
        axis.values().begin(), axis.values().end(),
        [](const v1::AxisValue& v) { return v.set_size() == 1 && v.set().begin()->first == "seed"; });
    if (!seeds_only) pooled.push_back(axis.name());
  }
  return pooled;
}

ComparePivot BuildComparePivot(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                               const std::string& metric) {
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
    } else if (StatePriority(run.state()) > StatePriority(cell.pending)) {
      cell.pending = run.state();
    }
  }
  cells.resize(pivot.row_labels.size());
  for (auto& row : cells) row.resize(pivot.column_labels.size());
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

std::vector<Counterpart> Counterparts(const std::vector<v1::Run>& runs, const std::string& metric) {
  static const std::vector<std::pair<std::string, Counterpart>> kPairs = {
      {contract::kTop1, {contract::kEmaTop1, "ema"}},
      {contract::kTop5, {contract::kEmaTop5, "ema"}},
      {contract::kEvalLoss, {contract::kEmaEvalLoss, "ema"}},
      {contract::kTop1, {contract::kDeployTop1, "deployable"}},
      {contract::kTop1, {contract::kEmaDeployTop1, "ema deployable"}},
      {contract::kEmaTop1, {contract::kEmaDeployTop1, "deployable"}}};
  std::vector<Counterpart> out;
  for (const auto& [raw, counterpart] : kPairs) {
    if (raw != metric) continue;
    for (const v1::Run& run : runs) {
      if (run.final_metrics().count(counterpart.metric) == 0) continue;
      out.push_back(counterpart);
      break;
    }
  }
  return out;
}

std::string DeployableLegend(const std::vector<Counterpart>& counterparts) {
  for (const Counterpart& c : counterparts) {
    if (c.metric != contract::kDeployTop1 && c.metric != contract::kEmaDeployTop1) continue;
    return absl::StrCat(contract::kDeployTop1,
                        ": the deployable model, as nmtrain --export writes it (every sparse "
                        "layer hard-masked at its target N:M, no decayed leak); ",
                        contract::kTop1,
                        ": the trained weights under the last step's rule (MDGF, SDGF: still ",
                        "leaking D(end) of every pruned weight)");
  }
  return "";
}

}  // namespace nmsparse::report
