// nmctl's output filter: text of any origin is shown without display controls; nmctl's own cursor movements
// pass, in order.
#include "cli/visible_output.h"

#include <sstream>

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

TEST(VisibleOutputTest, EscapesControlsKeepsNewlinesAndOrder) {
  std::ostringstream target;
  {
    VisibleOutput filter(target);
    std::ostream out(&filter);
    out << "sweep 'a\x1b]0;pwned\x07' x\u202ey\n" << '\r' << "split \xe2\x80";
    filter.WriteControl("\r\x1b[2K");
    out << "\xae" << 42 << "\n" << std::flush;
    out << "tail \xe2";
  }
  EXPECT_EQ(target.str(),
            "sweep 'a\\x1b]0;pwned\\x07' x\\u202ey\n\\x0dsplit \uFFFD\r\x1b[2K\uFFFD42\ntail \uFFFD");
}

TEST(VisibleOutputTest, JoinsACharacterSplitBetweenWrites) {
  std::ostringstream target;
  {
    VisibleOutput filter(target);
    std::ostream out(&filter);
    out << "\xe2\x80"
        << "\xae"
        << "\n";
  }
  EXPECT_EQ(target.str(), "\\u202e\n");
}

}  // namespace
}  // namespace nmsparse::cli
