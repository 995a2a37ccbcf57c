// The visible form of user text: every display control escaped, invalid UTF-8 replaced, other text as is.
#include "common/visible_text.h"

#include "common/unicode_text.h"
#include "gtest/gtest.h"

namespace nmsparse {
namespace {

TEST(VisibleTextTest, KeepsOrdinaryTextAndUnicode) {
  EXPECT_EQ(VisibleText("recipe=srste nm=2:4"), "recipe=srste nm=2:4");
  EXPECT_EQ(VisibleText("\u00b1 \u4e2d\u6587 \U0001F600"), "\u00b1 \u4e2d\u6587 \U0001F600");
  EXPECT_EQ(VisibleText("`id` $(id) ;|& '\" \\"), "`id` $(id) ;|& '\" \\");
}

TEST(VisibleTextTest, EscapesControlsOnOneLine) {
  EXPECT_EQ(VisibleText("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(VisibleText("a\nb\rc\td"), "a\\x0ab\\x0dc\\x09d");
  EXPECT_EQ(VisibleText(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(VisibleText("del\x7f"), "del\\x7f");
  EXPECT_EQ(VisibleText("c1\u0085\u009b"), "c1\\u0085\\u009b");
  EXPECT_EQ(VisibleText("evil\u202etxt.exe"), "evil\\u202etxt.exe");
  EXPECT_EQ(VisibleText("\u2066x\u2069\u200f\u2028"), "\\u2066x\\u2069\\u200f\\u2028");
}

TEST(VisibleTextTest, VisibleLinesKeepsNewlinesOnly) {
  EXPECT_EQ(VisibleLines("one\ntwo\r\n\x1b[1A"), "one\ntwo\\x0d\n\\x1b[1A");
}

TEST(VisibleTextTest, ReplacesInvalidUtf8) {
  const std::string r = "\uFFFD";
  EXPECT_EQ(VisibleText("a\xff"
                        "b"),
            "a" + r + "b");
  EXPECT_EQ(VisibleText("\xc0\xaf"), r + r);                  // Overlong '/'.
  EXPECT_EQ(VisibleText("\xed\xa0\x80"), r + r + r);          // A surrogate.
  EXPECT_EQ(VisibleText("\xf4\x90\x80\x80"), r + r + r + r);  // Past U+10FFFF.
  EXPECT_EQ(VisibleText("cut \xe2\x80"), "cut " + r);         // Truncated at the end.
  EXPECT_EQ(VisibleText("\xe2\x80"
                        "x"),
            r + r + "x");
}

TEST(VisibleTextTest, CutsToACharacterCount) {
  EXPECT_EQ(VisibleText("abcdef", 6), "abcdef");
  EXPECT_EQ(VisibleText("abcdefg", 6), "abc...");
  EXPECT_EQ(VisibleText("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", 5), "\u00e9\u00e9...");
  EXPECT_EQ(VisibleText("\x1b\x1b", 5), "\\x...");  // Counted after escaping.
  EXPECT_EQ(VisibleText(std::string(1 << 20, 'x'), 100).size(), 100u);
}

TEST(VisibleTextTest, FilterJoinsCharactersSplitBetweenPieces) {
  VisibleTextFilter filter(/*keep_newlines=*/true);
  std::string out = filter.Filter("a\xe2\x80");
  out += filter.Filter(
      "\xae"
      "b\n");  // U+202E split over two pieces.
  out += filter.Filter("c\xe2");
  out += filter.Flush();
  EXPECT_EQ(out, "a\\u202eb\nc\uFFFD");
}

TEST(UnicodeTextTest, ValidUtf8ReplacesOnlyBadBytes) {
  EXPECT_EQ(FirstInvalidUtf8("ok \u202e \x1b"), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("ok \xff"), 3u);
  EXPECT_EQ(FirstInvalidUtf8("cut \xe2\x80"), 4u);
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b \u202e\x1b"),
            "a\uFFFDb \u202e\x1b");  // Controls are kept: this is data.
  EXPECT_EQ(ValidUtf8("cut \xe2\x80"), "cut \uFFFD\uFFFD");
}

TEST(UnicodeTextTest, DecodesAndClassifies) {
  const std::string text = "\u20ac";
  const DecodedChar c = DecodeUtf8(text, 0);
  EXPECT_EQ(c.kind, DecodedChar::Kind::kValid);
  EXPECT_EQ(c.code_point, 0x20ACu);
  EXPECT_EQ(c.length, 3u);
  EXPECT_TRUE(IsDisplayControl(0x1B));
  EXPECT_TRUE(IsDisplayControl(0x9B));
  EXPECT_TRUE(IsDisplayControl(0x202E));
  EXPECT_FALSE(IsDisplayControl(' '));
  EXPECT_FALSE(IsDisplayControl(0x00A0));
}

}  // namespace
}  // namespace nmsparse
