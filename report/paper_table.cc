#include "report/paper_table.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/metric_text.h"
#include "contract/metric_names.h"

namespace nmsparse::report {
namespace {

PaperNumber Summary(const std::vector<double>& values) {
  ComparePivot::Cell cell;
  cell.values = values;
  PaperNumber number;
  number.n = cell.succeeded();
  number.mean = cell.mean();
  number.std = cell.stddev();
  return number;
}

std::string Number(const PaperTable& table, double value, bool sign);

PaperNumber ValueNumber(const ComparePivot& pivot, const ComparePivot::Cell& cell) {
  if (cell.succeeded() == 0 && !cell.stopped.empty()) {
    PaperTable units;  // The table's units: percent for accuracies.
    units.percent = ShownAsPercent(pivot.metric);
    return PaperNumber{0, 0.0, 0.0,
                       StoppedCellText(cell, [&units](double v) { return Number(units, v, false); })};
  }
  if (cell.succeeded() == 0) return PaperNumber{0, 0.0, 0.0, CellText(pivot, cell)};
  return Summary(cell.values);
}

// The differences between the cell's values and the reference cell's, paired by run labels other than the
// row (the same N:M, seed and any other axis value): their mean, sample std and count.
PaperNumber DeltaNumber(const ComparePivot::Cell& cell, const ComparePivot::Cell& reference) {
  std::vector<double> differences;
  for (size_t i = 0; i < cell.values.size(); ++i) {
    auto match = std::find(reference.pair_keys.begin(), reference.pair_keys.end(), cell.pair_keys[i]);
    if (match == reference.pair_keys.end()) continue;
    differences.push_back(cell.values[i] - reference.values[match - reference.pair_keys.begin()]);
  }
  if (differences.empty()) return PaperNumber{0, 0.0, 0.0, "-"};
  return Summary(differences);
}

std::string Number(const PaperTable& table, double value, bool sign) {
  if (!table.percent) return sign && value > 0 ? "+" + FormatMetric(value) : FormatMetric(value);
  // "-0.0" for a difference of -0.01 points reads as a loss that is not there.
  const double shown = std::round(value * 1000.0) / 10.0;
  return absl::StrFormat(sign && shown != 0.0 ? "%+.1f" : "%.1f", shown == 0.0 ? 0.0 : shown);
}

}  // namespace

bool ShownAsPercent(const std::string& metric) {
  return metric == contract::kTop1 || metric == contract::kTop5 || metric == contract::kBestTop1 ||
         metric == contract::kEmaTop1 || metric == contract::kEmaTop5 || metric == contract::kDeployTop1 ||
         metric == contract::kEmaDeployTop1;
}

absl::StatusOr<PaperTable> BuildPaperTable(const ComparePivot& pivot, const PaperTableOptions& options) {
  PaperTable table;
  table.metric = pivot.metric;
  table.percent = ShownAsPercent(pivot.metric);
  table.row_header = pivot.row_axis.empty() ? "run" : pivot.row_axis;
  table.row_labels = pivot.row_labels;
  size_t reference = 0;
  if (!options.delta_row.empty()) {
    auto it = std::find(pivot.row_labels.begin(), pivot.row_labels.end(), options.delta_row);
    if (it == pivot.row_labels.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--delta ", options.delta_row,
                                                     ": not a row of the table (",
                                                     absl::StrJoin(pivot.row_labels, ", "), ")"));
    }
    reference = static_cast<size_t>(it - pivot.row_labels.begin());
    table.reference = options.delta_row;
  }
  const bool one_column = pivot.column_axis.empty();
  for (size_t c = 0; c < pivot.column_labels.size(); ++c) {
    const std::string label = one_column ? "" : pivot.column_headers[c];
    table.columns.push_back({label, pivot.metric, PaperColumn::Kind::kValue, ""});
    for (const BesidePivot& b : options.beside)
      table.columns.push_back({label, b.pivot.metric, PaperColumn::Kind::kValue, b.label});
    if (!table.reference.empty())
      table.columns.push_back({label, pivot.metric, PaperColumn::Kind::kDelta, ""});
  }
  for (size_t r = 0; r < pivot.row_labels.size(); ++r) {
    std::vector<PaperNumber>& row = table.cells.emplace_back();
    for (size_t c = 0; c < pivot.column_labels.size(); ++c) {
      row.push_back(ValueNumber(pivot, pivot.cells[r][c]));
      for (const BesidePivot& b : options.beside) row.push_back(ValueNumber(b.pivot, b.pivot.cells[r][c]));
      if (table.reference.empty()) continue;
      row.push_back(r == reference ? PaperNumber{0, 0.0, 0.0, "-"}
                                   : DeltaNumber(pivot.cells[r][c], pivot.cells[reference][c]));
    }
  }
  return table;
}

std::vector<BesidePivot> CounterpartPivots(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                                           const std::vector<Counterpart>& counterparts) {
  std::vector<BesidePivot> out;
  for (const Counterpart& c : counterparts) out.push_back({c.label, BuildComparePivot(spec, runs, c.metric)});
  return out;
}

std::string ColumnHeaderText(const PaperTable& table, const PaperColumn& column) {
  if (column.kind == PaperColumn::Kind::kDelta) {
    const std::string delta = "\u0394 vs " + table.reference;
    return column.label.empty() ? delta : column.label + " " + delta;
  }
  if (column.label.empty()) return column.metric;
  return column.beside.empty() ? column.label : column.label + " " + column.beside;
}

std::string NumberText(const PaperTable& table, const PaperColumn& column, const PaperNumber& number,
                       const std::string& plus_minus) {
  if (number.n == 0) return number.state;
  const bool delta = column.kind == PaperColumn::Kind::kDelta;
  std::string text = Number(table, number.mean, delta);
  if (number.n > 1)
    absl::StrAppend(&text, plus_minus, Number(table, number.std, false), " (n=", number.n, ")");
  return text;
}

}  // namespace nmsparse::report
