// User text (names, labels, keys, log lines, token names, messages that quote them) made safe to show on a
// terminal, in a page, an SVG, a CSV cell or a TensorBoard tag: valid UTF-8, with every display control
// (common/unicode_text.h: ESC and the other C0 and C1 controls, DEL, bidi overrides, line separators) written
// as a visible escape: "\x1b", "\x0a", "\u202e". Bytes that are not UTF-8 become U+FFFD. The text itself is
// never interpreted; each output still applies its own markup escaping (HTML, XML, CSV quoting) on top.
#ifndef NMSPARSE_COMMON_VISIBLE_TEXT_H_
#define NMSPARSE_COMMON_VISIBLE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace nmsparse {

// One line: newlines and tabs are escaped too, so that a value can never start a new table row.
std::string VisibleText(std::string_view text);

// The same, cut to at most `max_chars` characters (after escaping), the cut marked with "...".
std::string VisibleText(std::string_view text, size_t max_chars);

// Several lines: '\n' is kept, everything else as in VisibleText.
std::string VisibleLines(std::string_view text);

// VisibleText over a stream of pieces (nmctl's output): a character split between two pieces is decoded
// whole; an incomplete one is replaced when Flush is called.
class VisibleTextFilter {
 public:
  explicit VisibleTextFilter(bool keep_newlines) : keep_newlines_(keep_newlines) {}

  // The visible form of `piece`, less a trailing incomplete character, which waits for the next piece.
  std::string Filter(std::string_view piece);
  // What is still waiting, as U+FFFD.
  std::string Flush();

 private:
  bool keep_newlines_;
  std::string pending_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_VISIBLE_TEXT_H_
