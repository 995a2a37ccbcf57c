#include "cli/compare_table.h"

#include <string>
#include <vector>

namespace nmsparse::cli {

Table RenderComparePivot(const report::ComparePivot& pivot, const std::vector<BesidePivot>& beside) {
  std::vector<std::string> headers = {pivot.row_axis.empty() ? "run" : pivot.row_axis};
  for (const std::string& c : pivot.column_labels) {
    headers.push_back(c);
    for (const BesidePivot& b : beside) {
      headers.push_back(pivot.column_axis.empty() ? b.pivot.metric : c + " " + b.label);
    }
  }
  Table table(headers);
  for (size_t r = 0; r < pivot.row_labels.size(); ++r) {
    std::vector<std::string> row = {pivot.row_labels[r]};
    for (size_t c = 0; c < pivot.cells[r].size(); ++c) {
      row.push_back(report::CellText(pivot, pivot.cells[r][c]));
      for (const BesidePivot& b : beside) row.push_back(report::CellText(b.pivot, b.pivot.cells[r][c]));
    }
    table.AddRow(row);
  }
  return table;
}

}  // namespace nmsparse::cli
