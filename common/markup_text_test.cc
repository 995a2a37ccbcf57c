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

TEST(MarkupTextTest, CsvFieldQuotesAndNeutralisesFormulas) {
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("=1+1"), "'=1+1");
  EXPECT_EQ(CsvField("-0.5"), "-0.5");
  EXPECT_EQ(CsvField("say \"hi\", then"), "\"say \"\"hi\"\", then\"");
}

}  // namespace
}  // namespace nmsparse
