// Plain-text tables for people: a header, a rule, aligned columns (numbers right-aligned). Every cell is
// shown as common/visible_text.h shows user text, on one line and cut to kMaxCellChars, so that no value (a
// name with a newline, an escape sequence, a megabyte label) can break a row or stretch every row to its
// width.
#ifndef NMSPARSE_CLI_TABLE_PRINTER_H_
#define NMSPARSE_CLI_TABLE_PRINTER_H_

#include <string>
#include <vector>

namespace nmsparse::cli {

inline constexpr size_t kMaxCellChars = 256;

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  // Cells of `column` added from now on show at most `width` characters: a longer one keeps its first
  // width - 1 and ends with "…" (display only: --json prints the whole value).
  void SetMaxWidth(size_t column, size_t width);

  // Missing cells are blank; extra cells are an error caught by a debug check in Render.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  // Columns whose every non-empty cell looks numeric are right-aligned. Lines end with '\n', no trailing
  // spaces.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> max_widths_;  // Per column; 0: no limit.
};

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_TABLE_PRINTER_H_
