// `nmctl compare`'s table: a sweep's pivot (report/compare_pivot.h) with one row per value of the first grid
// axis and one column per value of the second.
#ifndef NMSPARSE_CLI_COMPARE_TABLE_H_
#define NMSPARSE_CLI_COMPARE_TABLE_H_

#include <string>
#include <vector>

#include "cli/table_printer.h"
#include "report/compare_pivot.h"

namespace nmsparse::cli {

// Cells show the mean metric, and "± std (n=K)" when K > 1 succeeded runs share a cell, or the lower-case
// state of the cell's runs while none has succeeded, or "-" without runs (report::CellText).
// `beside`: the same runs' counterpart metrics (report::Counterparts: the model EMA's, the deployable
// model's), one column each beside each of `pivot`'s, headed "<column> <label>" (a one-column pivot: the
// counterpart metric's name).
struct BesidePivot {
  std::string label;
  report::ComparePivot pivot;
};
Table RenderComparePivot(const report::ComparePivot& pivot, const std::vector<BesidePivot>& beside = {});

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COMPARE_TABLE_H_
