#include "common/markup_text.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

// User strings are data: a label can never end a cell, start markup or run a command.
TEST(MarkupTextTest, MarkdownEscapesTableAndInlineMarkup) {
  EXPECT_EQ(MarkdownText("mdgf_exp"), "mdgf\\_exp");
  EXPECT_EQ(MarkdownText("a|b *c* [x](y) <b>&amp;"), "a\\|b \\*c\\* \\[x\\](y) \\<b\\>\\&amp;");
  EXPECT_EQ(MarkdownText("1:8"), "1:8");
  EXPECT_EQ(MarkdownText("two\nlines"), "two\\\\x0alines");  // Visible escape, then its backslash escaped.
}

TEST(MarkupTextTest, LatexEscapesEverySpecialCharacter) {
  EXPECT_EQ(LatexText("mdgf_exp 50% & $x$ #1 {a}"), "mdgf\\_exp 50\\% \\& \\$x\\$ \\#1 \\{a\\}");
  EXPECT_EQ(LatexText("~^\\input{x}"), "\\textasciitilde{}\\textasciicircum{}\\textbackslash{}input\\{x\\}");
  EXPECT_EQ(LatexText("1:8"), "1:8");
}

// CsvField is tested where it began, in server/api/export_test.cc (CsvFieldTest).

}  // namespace
}  // namespace nmsparse
