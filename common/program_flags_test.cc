// --version on the Abseil-flag programs: printed on stdout and the program told to exit 0.
#include "common/program_flags.h"

#include <iostream>
#include <sstream>

#include "common/version.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace nmsparse
