#include "schemas/limits.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace nmsparse::limits {
namespace {

TEST(FormatCountTest, GroupsThousands) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1'048'576), "1,048,576");
  EXPECT_EQ(FormatCount(-10'000'000), "-10,000,000");
  EXPECT_EQ(FormatCount(std::numeric_limits<int64_t>::max()), "9,223,372,036,854,775,807");
  EXPECT_EQ(FormatCount(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(CutLogLineTest, KeepsALineThatFits) {
  const std::string fits(kMaxLogLineBytes, 'a');
  EXPECT_EQ(CutLogLine(fits), fits);
}

TEST(CutLogLineTest, CutsAtACharacterBoundaryAndSaysHowMuchWithinTheLimit) {
  std::string text;
  for (int i = 0; i < 9000; ++i) text += "\xc3\xa9";  // 18,000 bytes of 2-byte characters.
  // " [18,000 bytes cut]" takes 19 bytes, leaving 4,077 for the text; byte 4,077 is inside a character.
  EXPECT_EQ(CutLogLine(text), text.substr(0, 4076) + " [13,924 bytes cut]");
  EXPECT_EQ(CutLogLine(std::string(5000, 'a')), std::string(4078, 'a') + " [922 bytes cut]");
}

TEST(CutTextTest, ACutTextFitsAndIsNotCutAgain) {
  for (int64_t size : {4097, 5000, 100'000, 10'000'000}) {
    const std::string cut = CutText(std::string(size, 'x'), kMaxLogLineBytes);
    EXPECT_LE(static_cast<int64_t>(cut.size()), kMaxLogLineBytes) << size;
    EXPECT_EQ(CutText(cut, kMaxLogLineBytes), cut) << size;
  }
  EXPECT_EQ(CutText("abcdef", 6), "abcdef");
  EXPECT_EQ(CutText("abcdefghijklmnopqrstuvwxyz", 18), "abc [23 bytes cut]");
  EXPECT_EQ(CutText("abcdefg", 3), " [7 bytes cut]");  // A limit below the marker keeps no text.
}

// The docs' table row of each limit names it, its value as FormatCount writes it, and its flag.
TEST(LimitsDocTest, ReliabilityDocListsEveryLimit) {
  std::ifstream in("docs/reliability.md");
  ASSERT_TRUE(in) << "docs/reliability.md is not in the test's runfiles";
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) == 0) rows.push_back(line);
  }
  for (const Limit& limit : AllLimits()) {
    const std::string cell = "| " + limit.name + " |";
    const std::string* row = nullptr;
    for (const std::string& r : rows) {
      if (r.rfind(cell, 0) == 0) row = &r;
    }
    ASSERT_NE(row, nullptr) << "no row starting '" << cell << "'";
    EXPECT_NE(row->find(" " + FormatCount(limit.value) + " "), std::string::npos) << *row;
    std::istringstream flags(limit.flag);
    for (std::string word; flags >> word;) {
      while (!word.empty() && (word.back() == ';' || word.back() == ',')) word.pop_back();
      if (word.rfind("--", 0) == 0 || word.rfind("NMSPARSE_", 0) == 0) {
        EXPECT_NE(row->find(word), std::string::npos) << "'" << word << "' missing from " << *row;
      }
    }
  }
}

}  // namespace
}  // namespace nmsparse::limits
