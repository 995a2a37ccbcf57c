#include "cli/compare_table.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/table_printer.h"
#include "common/markup_text.h"
#include "common/visible_text.h"

namespace nmsparse::cli {
namespace {

using report::PaperColumn;
using report::PaperNumber;
using report::PaperTable;

std::string Text(const PaperTable& table, const std::string& title) {
  std::vector<std::string> headers = {table.row_header};
  for (const PaperColumn& c : table.columns) headers.push_back(ColumnHeaderText(table, c));
  Table out(headers);
  for (size_t r = 0; r < table.row_labels.size(); ++r) {
    std::vector<std::string> row = {table.row_labels[r]};
    for (size_t c = 0; c < table.columns.size(); ++c) {
      row.push_back(NumberText(table, table.columns[c], table.cells[r][c]));
    }
    out.AddRow(row);
  }
  return VisibleText(title) + "\n" + out.Render();
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  return "| " + absl::StrJoin(cells, " | ") + " |\n";
}

std::string Markdown(const PaperTable& table, const std::string& title) {
  std::vector<std::string> headers = {MarkdownText(table.row_header)};
  std::vector<std::string> rule = {"---"};
  for (const PaperColumn& c : table.columns) {
    headers.push_back(MarkdownText(ColumnHeaderText(table, c)));
    rule.push_back("---:");
  }
  std::string out = MarkdownText(title) + "\n\n" + MarkdownRow(headers) + MarkdownRow(rule);
  for (size_t r = 0; r < table.row_labels.size(); ++r) {
    std::vector<std::string> row = {MarkdownText(table.row_labels[r])};
    for (size_t c = 0; c < table.columns.size(); ++c) {
      row.push_back(MarkdownText(NumberText(table, table.columns[c], table.cells[r][c])));
    }
    out += MarkdownRow(row);
  }
  return out;
}

// A header in LaTeX: the label and reference are data; Δ is math.
std::string LatexHeader(const PaperTable& table, const PaperColumn& column) {
  if (column.kind != PaperColumn::Kind::kDelta) return LatexText(ColumnHeaderText(table, column));
  const std::string delta = "$\\Delta$ vs " + LatexText(table.reference);
  return column.label.empty() ? delta : LatexText(column.label) + " " + delta;
}

std::string LatexRow(const std::vector<std::string>& cells) {
  return absl::StrJoin(cells, " & ") + " \\\\\n";
}

std::string Latex(const PaperTable& table, const std::string& title) {
  std::vector<std::string> headers = {LatexText(table.row_header)};
  for (const PaperColumn& c : table.columns) headers.push_back(LatexHeader(table, c));
  std::string out =
      absl::StrCat("% ", LatexText(title), "\n\\begin{tabular}{l", std::string(table.columns.size(), 'r'),
                   "}\n\\toprule\n", LatexRow(headers), "\\midrule\n");
  for (size_t r = 0; r < table.row_labels.size(); ++r) {
    std::vector<std::string> row = {LatexText(table.row_labels[r])};
    for (size_t c = 0; c < table.columns.size(); ++c) {
      // The numbers and " $\pm$ " are ours; a state ("running") is plain text.
      const PaperNumber& number = table.cells[r][c];
      row.push_back(number.n == 0 ? LatexText(number.state)
                                  : NumberText(table, table.columns[c], number, " $\\pm$ "));
    }
    out += LatexRow(row);
  }
  return out + "\\bottomrule\n\\end{tabular}\n";
}

// Rounded to 1e-9 so that a std of equal differences reads 0, not 6.4e-15.
std::string CsvNumber(const PaperTable& table, double value) {
  return absl::StrFormat("%.10g", std::round((table.percent ? value * 100.0 : value) * 1e9) / 1e9 + 0.0);
}

// "-" (no runs, no pairs, the reference row's own difference) is an empty cell, not a neutralised formula.
std::string CsvState(const std::string& state) { return state == "-" ? "" : CsvField(state); }

std::string Csv(const PaperTable& table) {
  std::string out = absl::StrCat(CsvField(table.row_header), ",column,quantity,unit,mean,std,n,state\n");
  for (size_t r = 0; r < table.row_labels.size(); ++r) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const PaperColumn& column = table.columns[c];
      const PaperNumber& number = table.cells[r][c];
      const bool delta = column.kind == PaperColumn::Kind::kDelta;
      const std::string quantity = delta ? column.metric + " delta vs " + table.reference : column.metric;
      const bool any = number.n > 0;
      out += absl::StrCat(CsvField(table.row_labels[r]), ",", CsvField(column.label), ",", CsvField(quantity),
                          ",", table.percent ? "%" : "", ",", any ? CsvNumber(table, number.mean) : "", ",",
                          number.n > 1 ? CsvNumber(table, number.std) : "", ",", number.n, ",",
                          any ? (delta ? "paired" : "succeeded") : CsvState(number.state), "\n");
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<TableFormat> ParseTableFormat(const std::string& text) {
  if (text == "text") return TableFormat::kText;
  if (text == "markdown") return TableFormat::kMarkdown;
  if (text == "latex") return TableFormat::kLatex;
  if (text == "csv") return TableFormat::kCsv;
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", VisibleText(text), "' is not a table format (text, markdown, latex, csv)"));
}

std::string RenderPaperTable(const PaperTable& table, const std::string& title, TableFormat format) {
  switch (format) {
    case TableFormat::kMarkdown:
      return Markdown(table, title);
    case TableFormat::kLatex:
      return Latex(table, title);
    case TableFormat::kCsv:
      return Csv(table);
    case TableFormat::kText:
      break;
  }
  return Text(table, title);
}

}  // namespace nmsparse::cli
