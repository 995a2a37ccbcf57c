#include "cli/compare_table.h"

#include <string>
#include <vector>

namespace nmsparse::cli {

Table RenderComparePivot(const report::ComparePivot& pivot) {
  std::vector<std::string> headers = {pivot.row_axis.empty() ? "run" : pivot.row_axis};
  for (const std::string& c : pivot.column_labels) headers.push_back(c);
  Table table(headers);
  for (size_t r = 0; r < pivot.row_labels.size(); ++r) {
    std::vector<std::string> row = {pivot.row_labels[r]};
    for (const report::ComparePivot::Cell& cell : pivot.cells[r])
      row.push_back(report::CellText(pivot, cell));
    table.AddRow(row);
  }
  return table;
}

}  // namespace nmsparse::cli
