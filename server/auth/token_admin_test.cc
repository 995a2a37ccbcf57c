// nmserver init against a real database file: the token directory is created, mode 0700, when missing.
#include "server/auth/token_admin.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

TEST(TokenAdminTest, InitCreatesAMissingTokenDirOwnerOnly) {
  const std::filesystem::path tmp = std::getenv("TEST_TMPDIR");
  TokenAdminFlags flags;
  flags.db_path = (tmp / "init.db").string();
  flags.token_dir = (tmp / "new" / "tokens").string();
  std::ostringstream out, err;
  ASSERT_EQ(RunTokenAdmin({"init"}, flags, out, err), 0) << err.str();
  struct stat st {};
  ASSERT_EQ(stat(flags.token_dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(std::filesystem::exists(flags.token_dir + "/admin.token"));
  EXPECT_TRUE(std::filesystem::exists(flags.token_dir + "/worker.token"));
}

TEST(TokenAdminTest, InitRefusesATokenDirThatIsAFileNamingIt) {
  const std::filesystem::path tmp = std::getenv("TEST_TMPDIR");
  TokenAdminFlags flags;
  flags.db_path = (tmp / "file.db").string();
  flags.token_dir = (tmp / "plain_file").string();
  { std::ofstream(flags.token_dir) << "x"; }
  std::ostringstream out, err;
  EXPECT_EQ(RunTokenAdmin({"init"}, flags, out, err), 1);
  EXPECT_NE(err.str().find("--token_dir " + flags.token_dir), std::string::npos) << err.str();
}

}  // namespace
}  // namespace nmsparse::server
