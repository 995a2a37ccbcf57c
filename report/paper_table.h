// The compare table in the paper's form (`nmctl compare` prints it as text, Markdown, LaTeX or CSV;
// `nmctl report` shows it in HTML): accuracies in percent with one decimal, each cell the mean ± sample std
// (n) of its runs, columns headed by N:M, and optionally beside each column its paired difference against a
// reference row (Δ vs dense, Δ vs a recipe).
#ifndef NMSPARSE_REPORT_PAPER_TABLE_H_
#define NMSPARSE_REPORT_PAPER_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/compare_pivot.h"

namespace nmsparse::report {

// One cell: the mean, sample std and count of its values, or, without values, `state` ("running", "-").
struct PaperNumber {
  int n = 0;
  double mean = 0.0;
  double std = 0.0;
  std::string state;
};

struct PaperColumn {
  enum class Kind {
    kValue,  // The metric (or the model EMA's) of a pivot column.
    kDelta,  // Paired difference against the reference row, in the same column.
  };
  std::string label;   // The pivot column's header ("1:8"); empty for a one-column pivot.
  std::string metric;  // "top1", "ema_top1", "deploy_top1".
  Kind kind = Kind::kValue;
  std::string beside;  // A counterpart's label ("ema", "deployable"); empty for the table's own metric.
};

struct PaperTable {
  std::string metric;
  bool percent = false;    // Accuracies: values and differences are shown x 100.
  std::string row_header;  // The row axis ("recipe"), or "run".
  std::string reference;   // The row Δ columns are against; empty without them.
  std::vector<PaperColumn> columns;
  std::vector<std::string> row_labels;
  std::vector<std::vector<PaperNumber>> cells;  // [row][column].
};

// The same runs' counterpart of the metric (report::Counterparts: the model EMA's, the deployable model's):
// a column beside each of the table's, headed "<column> <label>".
struct BesidePivot {
  std::string label;
  ComparePivot pivot;
};

// The pivots of `counterparts` (Counterparts of the table's metric, or some of them) over `runs`, in order.
std::vector<BesidePivot> CounterpartPivots(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                                           const std::vector<Counterpart>& counterparts);

struct PaperTableOptions {
  std::vector<BesidePivot> beside;
  std::string delta_row;  // A row label: a Δ column beside each (empty: none).
};

// InvalidArgument naming the rows when `options.delta_row` is not one of the pivot's rows.
absl::StatusOr<PaperTable> BuildPaperTable(const ComparePivot& pivot, const PaperTableOptions& options = {});

// True for metrics that are fractions of the evaluation set (top1, top5, best_top1 and the EMA's): shown in
// percent.
bool ShownAsPercent(const std::string& metric);

// A header as plain text: "1:8", "1:8 ema", "1:8 deployable", "1:8 Δ vs dense" ("top1", "ema_top1",
// "deploy_top1", "Δ vs dense" for one column).
std::string ColumnHeaderText(const PaperTable& table, const PaperColumn& column);

// A number's text: "81.2 ± 1.4 (n=3)", "81.2" (one value), "+0.8 ± 0.5 (n=3)" (a difference), or its state.
// `plus_minus` is what joins mean and std (" ± "; LaTeX: " $\pm$ ").
std::string NumberText(const PaperTable& table, const PaperColumn& column, const PaperNumber& number,
                       const std::string& plus_minus = " \u00b1 ");

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_PAPER_TABLE_H_
