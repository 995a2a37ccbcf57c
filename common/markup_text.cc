#include "common/markup_text.h"

#include <regex>

#include "common/visible_text.h"

namespace nmsparse {
namespace {

// "-0.5", "1e-3": a cell that is a number is no formula, and stays a number in a spreadsheet.
bool IsDecimalNumber(const std::string& s) {
  static const std::regex kNumber(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  return std::regex_match(s, kNumber);
}

}  // namespace

std::string MarkdownText(std::string_view text) {
  std::string out;
  for (char c : VisibleText(text)) {
    if (std::string_view("\\`*_[]<>|~#&!").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string LatexText(std::string_view text) {
  std::string out;
  for (char c : VisibleText(text)) {
    switch (c) {
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string CsvField(std::string_view text) {
  std::string cell = VisibleText(text);
  if (!cell.empty() && std::string("=+-@").find(cell[0]) != std::string::npos && !IsDecimalNumber(cell)) {
    cell.insert(0, "'");
  }
  if (cell.find_first_of(",\"") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace nmsparse
