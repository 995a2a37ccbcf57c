#include "cli/table_printer.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

TEST(TablePrinterTest, AlignsTextLeftAndNumbersRight) {
  Table table({"RUN", "RECIPE", "TOP1"});
  table.AddRow({"1", "dense", "81.5"});
  table.AddRow({"12", "mdgf_exp", "9.25"});
  EXPECT_EQ(table.Render(),
            "RUN  RECIPE    TOP1\n"
            "---  --------  ----\n"
            "  1  dense     81.5\n"
            " 12  mdgf_exp  9.25\n");
}

TEST(TablePrinterTest, MissingCellsAndDashesDoNotBreakAlignment) {
  Table table({"A", "B"});
  table.AddRow({"x"});
  table.AddRow({"yy", "-"});
  table.AddRow({"z", "3"});
  EXPECT_EQ(table.Render(),
            "A   B\n"
            "--  -\n"
            "x\n"
            "yy  -\n"
            "z   3\n");
}

// Issue 22: one 50 MB sweep name padded every row of `nmctl sweeps` to its width (1.15 GB of output).
TEST(TablePrinterTest, AColumnsMaxWidthElidesLongerCells) {
  Table table({"ID", "NAME", "N"});
  table.SetMaxWidth(1, 6);
  table.AddRow({"1", std::string(1'000'000, 'x'), "3"});
  table.AddRow({"2", "é→é→é→é→", "4"});
  table.AddRow({"3", "short", "5"});
  EXPECT_EQ(table.Render(),
            "ID  NAME    N\n"
            "--  ------  -\n"
            " 1  xxxxx…  3\n"
            " 2  é→é→é…  4\n"
            " 3  short   5\n");
}

TEST(TablePrinterTest, CountsUtf8CharactersAsOneColumn) {
  Table table({"STATE", "N"});
  table.AddRow({"→ok", "1"});
  table.AddRow({"abcd", "22"});
  EXPECT_EQ(table.Render(),
            "STATE   N\n"
            "-----  --\n"
            "→ok     1\n"
            "abcd   22\n");
}

TEST(TablePrinterTest, HeaderOnly) { EXPECT_EQ(Table({"ID", "HOST"}).Render(), "ID  HOST\n--  ----\n"); }

// Issue 22: a cell is data. A newline cannot start a row, an escape sequence reaches no terminal, and one
// huge value does not pad every row to its width.
TEST(TablePrinterTest, HostileCellsStayOnTheirRowAndVisible) {
  Table table({"ID", "NAME", "WHY"});
  table.AddRow({"1", "fake\n2  row", "a\x1b[2Jb"});
  table.AddRow({"2", "rlo\u202eexe", "bad\xff utf-8"});
  table.AddRow({"3", std::string(1 << 20, 'x'), "c1\u009b31m"});
  const std::string text = table.Render();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5) << text;
  EXPECT_NE(text.find("fake\\x0a2  row"), std::string::npos) << text;
  EXPECT_NE(text.find("a\\x1b[2Jb"), std::string::npos);
  EXPECT_NE(text.find("rlo\\u202eexe"), std::string::npos);
  EXPECT_NE(text.find("bad\uFFFD utf-8"), std::string::npos);
  EXPECT_NE(text.find("c1\\u009b31m"), std::string::npos);
  EXPECT_LT(text.size(), 6 * (kMaxCellChars + 40));
  for (unsigned char c : text) EXPECT_TRUE(c >= 0x20 || c == '\n') << int{c};
}

}  // namespace
}  // namespace nmsparse::cli
