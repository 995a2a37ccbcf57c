// nmctl's stdout and stderr as a terminal sees them: everything written passes through
// common/visible_text.h's filter (newlines kept), so that no byte of an answer (a sweep name, a label, a log
// line, an error quoting one) can move the cursor, clear the screen, recolor or reorder the terminal,
// whichever command prints it. The live views' own cursor movements are the one exception, written with
// WriteControl.
#ifndef NMSPARSE_CLI_VISIBLE_OUTPUT_H_
#define NMSPARSE_CLI_VISIBLE_OUTPUT_H_

#include <ostream>
#include <streambuf>
#include <string_view>

#include "common/visible_text.h"

namespace nmsparse::cli {

// A stream buffer in front of `target`: unbuffered, so text and control sequences keep their order.
class VisibleOutput : public std::streambuf {
 public:
  explicit VisibleOutput(std::ostream& target) : target_(target) {}
  ~VisibleOutput() override;
  VisibleOutput(const VisibleOutput&) = delete;
  VisibleOutput& operator=(const VisibleOutput&) = delete;

  // `sequence` as it is, after the text written before it: nmctl's own "\r\x1b[2K" and "\x1b[1A".
  void WriteControl(std::string_view sequence);

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void Write(const std::string& text);

  std::ostream& target_;
  VisibleTextFilter filter_{/*keep_newlines=*/true};
};

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_VISIBLE_OUTPUT_H_
