// The `compare` view: a sweep's final metric as a table with one row per value of the first grid axis and one
// column per value of the second (the layout of the paper's tables), or a single column with one axis.
#ifndef NMSPARSE_CLI_COMPARE_PIVOT_H_
#define NMSPARSE_CLI_COMPARE_PIVOT_H_

#include <string>
#include <vector>

#include "cli/table_printer.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

struct ComparePivot {
  struct Cell {
    int succeeded = 0;  // Succeeded runs with the metric.
    double sum = 0.0;   // Their metric values, summed (the cell shows the mean).
    int runs = 0;       // All runs in the cell.
    v1::RunState pending = v1::RUN_STATE_UNSPECIFIED;  // Most relevant state when none succeeded.
    double mean() const { return succeeded > 0 ? sum / succeeded : 0.0; }
  };
  std::string metric;
  std::string row_axis;     // Empty without grid axes: then rows are runs.
  std::string column_axis;  // Empty with fewer than two grid axes: one column, the metric.
  std::vector<std::string> row_labels;
  std::vector<std::string> column_labels;
  std::vector<std::vector<Cell>> cells;  // [row][column].
};

ComparePivot BuildComparePivot(const v1::SweepSpec& spec, const std::vector<v1::Run>& runs,
                               const std::string& metric);

// Cells show the mean metric (and "(n=K)" when K > 1 runs share a cell), or the lower-case state of the
// cell's runs while none has succeeded, or "-" without runs.
Table RenderComparePivot(const ComparePivot& pivot);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COMPARE_PIVOT_H_
