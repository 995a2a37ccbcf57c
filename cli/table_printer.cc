#include "cli/table_printer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/unicode_text.h"
#include "common/visible_text.h"

namespace nmsparse::cli {
namespace {

bool LooksNumeric(const std::string& cell) {
  double ignored;
  std::string trimmed = cell;
  if (!trimmed.empty() && trimmed.back() == '%') trimmed.pop_back();
  return absl::SimpleAtod(trimmed, &ignored);
}

// Display width: counts UTF-8 code points, not bytes (progress bars and arrows are multi-byte).
size_t Width(const std::string& s) {
  size_t width = 0;
  for (size_t at = 0; at < s.size(); at += DecodeUtf8(s, at).length) ++width;
  return width;
}

// The first width - 1 characters of `s` and "…" when it is wider than `width`.
std::string Elide(const std::string& s, size_t width) {
  if (width == 0 || Width(s) <= width) return s;
  size_t kept = 0, end = 0;
  for (; end < s.size(); ++end) {
    const bool starts_character = (static_cast<unsigned char>(s[end]) & 0xC0) != 0x80;
    if (starts_character && kept++ == width - 1) break;
  }
  return s.substr(0, end) + "…";
}

std::vector<std::string> Visible(std::vector<std::string> cells) {
  for (std::string& cell : cells) cell = VisibleText(cell, kMaxCellChars);
  return cells;
}

}  // namespace

Table::Table(std::vector<std::string> headers) : headers_(Visible(std::move(headers))) {}

void Table::SetMaxWidth(size_t column, size_t width) {
  if (max_widths_.size() <= column) max_widths_.resize(column + 1, 0);
  max_widths_[column] = width;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), headers_.size()));
  cells = Visible(std::move(cells));
  for (size_t c = 0; c < cells.size() && c < max_widths_.size(); ++c)
    cells[c] = Elide(cells[c], max_widths_[c]);
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  size_t columns = headers_.size();
  for (const auto& row : rows_) columns = std::max(columns, row.size());
  std::vector<size_t> widths(columns, 0);
  std::vector<bool> numeric(columns, true);
  std::vector<bool> any(columns, false);
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = Width(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], Width(row[c]));
      if (row[c].empty() || row[c] == "-") continue;
      any[c] = true;
      numeric[c] = numeric[c] && LooksNumeric(row[c]);
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool header, bool rule_line) {
    std::string out;
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::string pad(widths[c] - Width(cell), ' ');
      const bool right = numeric[c] && any[c] && !(header && rule_line);
      if (c > 0) out += "  ";
      out += right ? pad + cell : cell + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_, true, false);
  std::vector<std::string> rule(columns);
  for (size_t c = 0; c < columns; ++c) rule[c] = std::string(widths[c], '-');
  out += line(rule, true, true);
  for (const auto& row : rows_) out += line(row, false, false);
  return out;
}

}  // namespace nmsparse::cli
