// --version on the Abseil-flag programs: printed on stdout and the program told to exit 0; unknown flags
// found before Abseil would exit 1 on them.
#include "common/program_flags.h"

#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "common/version.h"
#include "gtest/gtest.h"

ABSL_FLAG(bool, test_switch, false, "a boolean flag of this test");
ABSL_FLAG(std::string, test_value, "", "a string flag of this test");
ABSL_FLAG(std::string, o, "", "a one-letter flag, given as -o");

namespace nmsparse {
namespace {

std::string Captured(const std::function<void()>& f) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  f();
  std::cout.rdbuf(old);
  return captured.str();
}

TEST(ProgramFlagsTest, VersionIsPrintedAndEndsTheProgram) {
  std::vector<std::string> argv_text = {"nmserver", "--db=x.db", "--version"};
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  std::optional<std::vector<std::string>> positional;
  const std::string out = Captured([&] {
    positional =
        ParseProgramFlags(static_cast<int>(argv.size()), argv.data(), "nmserver --db=FILE", __FILE__);
  });
  EXPECT_FALSE(positional.has_value());
  EXPECT_EQ(out, std::string("nmserver (nmsparse) ") + kVersion + "\n");
}

TEST(ProgramFlagsTest, VersionAfterDoubleDashIsAnArgument) {
  EXPECT_FALSE(PrintVersionIfAsked({"nmworker", "--", "--version"}, "nmworker"));
  EXPECT_EQ(Captured([] {
              EXPECT_TRUE(PrintVersionIfAsked({"nmworker", "--version"}, "nmworker"));
            }),
            VersionText("nmworker"));
}

TEST(ProgramFlagsTest, UnknownFlagsAreNamedAsWritten) {
  EXPECT_EQ(FirstUnknownFlag({"p", "--test_switch", "--test_value=x", "-o", "dir", "positional"}), 0u);
  EXPECT_EQ(FirstUnknownFlag({"p", "--notest_switch"}), 0u);  // Abseil's negation of a boolean.
  EXPECT_EQ(FirstUnknownFlag({"p", "--test_value=x", "--test_valeu=y"}), 2u);
  EXPECT_EQ(FirstUnknownFlag({"p", "--notest_value"}), 1u);  // Not a boolean.
  EXPECT_EQ(FirstUnknownFlag({"p", "-x"}), 1u);
  EXPECT_EQ(FirstUnknownFlag({"p", "--test_value", "-not-a-flag", "-y"}), 3u);  // A value, then a flag.
  EXPECT_EQ(FirstUnknownFlag({"p", "--", "--whatever"}), 0u);                   // Arguments after "--".
  // Dashed spellings are known once normalized, as ParseProgramFlags does first.
  std::string dashed = "--test-value=1";
  char* argv[] = {const_cast<char*>("p"), dashed.data()};
  EXPECT_EQ(FirstUnknownFlag(NormalizeFlagNames(2, argv)), 0u);
}

}  // namespace
}  // namespace nmsparse
