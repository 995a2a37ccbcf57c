// Issue 22: token names with newlines, ANSI codes or look-alikes were accepted; now only plain identifiers.
#include "server/auth/token_name.h"

#include <gtest/gtest.h>

namespace nmsparse::server {
namespace {

TEST(TokenNameTest, PlainIdentifiers) {
  for (const char* name : {"alice", "worker", "ci-bot.2", "a", "9_lives"}) {
    EXPECT_TRUE(CheckTokenName(name).ok()) << name;
  }
  EXPECT_TRUE(CheckTokenName(std::string(kMaxTokenNameBytes, 'x')).ok());
}

TEST(TokenNameTest, RefusesWithTheValueShownSafely) {
  for (const std::string& name :
       {std::string(""), std::string("-rf"), std::string(".hidden"), std::string("al ice"),
        std::string("a\nb"), std::string("\x1b[31mroot"), std::string("adm\u0456n"), std::string("a/b"),
        std::string(kMaxTokenNameBytes + 1, 'x')}) {
    const absl::Status status = CheckTokenName(name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(status.message().find("letters, digits"), std::string::npos);
    for (unsigned char c : status.message()) EXPECT_GE(c, 0x20) << status.message();
  }
  EXPECT_NE(CheckTokenName("\x1b[31mroot").message().find("'\\x1b[31mroot'"), absl::string_view::npos);
}

}  // namespace
}  // namespace nmsparse::server
