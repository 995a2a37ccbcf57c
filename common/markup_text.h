// User text (labels, axis and sweep names) as a cell of a Markdown, LaTeX or CSV table: shown as
// common/visible_text.h shows it (one line, controls escaped), then with the format's own escaping, so that
// a label is always read as text and never as markup, a formula or a new cell.
#ifndef NMSPARSE_COMMON_MARKUP_TEXT_H_
#define NMSPARSE_COMMON_MARKUP_TEXT_H_

#include <string>
#include <string_view>

namespace nmsparse {

// Backslash before each character CommonMark or a GFM table reads as markup: \ ` * _ [ ] < > | ~ # & !
std::string MarkdownText(std::string_view text);

// & % $ # _ { } as \&..., ~ ^ \ as \textasciitilde{}, \textasciicircum{}, \textbackslash{}.
std::string LatexText(std::string_view text);

// RFC 4180 quoting, and OWASP's rule against CSV injection: text a spreadsheet would read as a formula
// (starting with = + - @, unless it is a number) gets a leading quote.
std::string CsvField(std::string_view text);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_MARKUP_TEXT_H_
