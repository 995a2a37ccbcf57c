// `nmctl compare`'s table: the paper's table (report/paper_table.h) as text for a terminal, or as Markdown,
// LaTeX (booktabs) or CSV to paste into a paper or read into a plotting script.
#ifndef NMSPARSE_CLI_COMPARE_TABLE_H_
#define NMSPARSE_CLI_COMPARE_TABLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/paper_table.h"

namespace nmsparse::cli {

enum class TableFormat { kText, kMarkdown, kLatex, kCsv };

// "text", "markdown", "latex" or "csv"; InvalidArgument naming the value and the choices otherwise.
absl::StatusOr<TableFormat> ParseTableFormat(const std::string& text);

// The table with `title` above it: text (aligned columns under the title), Markdown (the title as a
// paragraph, then a GFM table), LaTeX (the title as a % comment, then a tabular with booktabs rules), CSV
// (no title: one line per cell, "ROW_AXIS,column,quantity,unit,mean,std,n,state"). User strings (labels,
// names) are escaped for the format.
std::string RenderPaperTable(const report::PaperTable& table, const std::string& title, TableFormat format);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COMPARE_TABLE_H_
