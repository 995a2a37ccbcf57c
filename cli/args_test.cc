#include "cli/args.h"

#include "gtest/gtest.h"

namespace nmsparse::cli {
namespace {

const std::vector<OptionSpec> kOptions = {
    {"json", false},        {"set", true, 0, true}, {"priority", true}, {"k", true, 'k'},
    {"follow", false, 'f'}, {"output", true, 'o'},  {"dry-run", false},
};

TEST(ArgsTest, CommandPositionalsAndOptionsInAnyOrder) {
  auto parsed = ParseArgs(
      {"--json", "submit", "sweep.yaml", "--set", "a.b=1", "--set=c=2", "--priority", "-5", "--dry-run"},
      kOptions);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command, "submit");
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"sweep.yaml"});
  EXPECT_TRUE(parsed->Has("json"));
  EXPECT_TRUE(parsed->Has("dry-run"));
  EXPECT_EQ(parsed->GetAll("set"), (std::vector<std::string>{"a.b=1", "c=2"}));
  EXPECT_EQ(parsed->Get("priority"), "-5");
  EXPECT_FALSE(parsed->Get("k").has_value());
}

TEST(ArgsTest, ShortOptions) {
  auto parsed = ParseArgs({"best", "3", "-k", "2", "-f", "-o", "out.csv"}, kOptions);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Get("k"), "2");
  EXPECT_TRUE(parsed->Has("follow"));
  EXPECT_EQ(parsed->Get("output"), "out.csv");
}

TEST(ArgsTest, DoubleDashEndsOptions) {
  auto parsed = ParseArgs({"validate", "--", "--weird-name.yaml"}, kOptions);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"--weird-name.yaml"});
}

TEST(ArgsTest, NegativeNumberIsAPositional) {
  auto parsed = ParseArgs({"run", "-3"}, kOptions);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"-3"});
}

TEST(ArgsTest, Errors) {
  EXPECT_EQ(ParseArgs({"submit", "--bogus"}, kOptions).status().message(),
            "unknown option '--bogus' for 'submit'");
  EXPECT_EQ(ParseArgs({"submit", "--priority"}, kOptions).status().message(),
            "option '--priority' needs a value");
  EXPECT_EQ(ParseArgs({"x", "--json=yes"}, kOptions).status().message(), "option '--json' takes no value");
  EXPECT_EQ(ParseArgs({"x", "--priority", "1", "--priority", "2"}, kOptions).status().message(),
            "option '--priority' given twice");
  EXPECT_FALSE(ParseArgs({"x", "-z"}, kOptions).ok());
}

TEST(ArgsTest, ParseId) {
  EXPECT_EQ(*ParseId("42", "run id"), 42);
  EXPECT_EQ(ParseId("abc", "run id").status().message(), "run id must be a non-negative integer, got 'abc'");
  EXPECT_FALSE(ParseId("-1", "run id").ok());
}

}  // namespace
}  // namespace nmsparse::cli
