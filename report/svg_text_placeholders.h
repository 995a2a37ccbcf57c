// Keeps user text out of gnuplot's command language. gnuplot evaluates what its scripts quote (backquotes
// run a shell command even inside a double-quoted title), so a figure's script carries, in place of each
// title, axis label and legend entry, a placeholder made of our own letters and digits, as many characters
// long as the text will be, so that gnuplot sizes the legend for it. Once gnuplot has written the SVG, each
// text node that is exactly a placeholder becomes the text: common/visible_text.h's form (no control
// characters, which XML 1.0 forbids), XML-escaped.
#ifndef NMSPARSE_REPORT_SVG_TEXT_PLACEHOLDERS_H_
#define NMSPARSE_REPORT_SVG_TEXT_PLACEHOLDERS_H_

#include <map>
#include <string>

namespace nmsparse::report {

// Most characters of one text in a figure (a legend entry past this is cut, marked with "...").
inline constexpr size_t kMaxFigureTextChars = 160;

class SvgTextPlaceholders {
 public:
  // The placeholder of `text`: "Q<index>Q", padded with 'q' to the length of the text as shown; only
  // [0-9Qq], so it means nothing to gnuplot in any context. An empty text stays empty.
  std::string Add(const std::string& text);

  // `svg` with every text node (the characters between '>' and the next '<') that is exactly a placeholder
  // replaced by its XML-escaped text.
  std::string Substitute(const std::string& svg) const;

 private:
  std::map<std::string, std::string> escaped_;  // Placeholder -> XML text.
};

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SVG_TEXT_PLACEHOLDERS_H_
