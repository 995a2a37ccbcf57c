#include "common/checked_file.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

std::string TempDir() {
  std::string dir =
      std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/checked_file_XXXXXX";
  return mkdtemp(dir.data());
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(CheckedFileTest, WritesAndRenames) {
  const std::string path = TempDir() + "/spec.yaml";
  ASSERT_TRUE(WriteFileAtomically(path, "a: 1\n").ok());
  EXPECT_EQ(Read(path), "a: 1\n");
  EXPECT_FALSE(Exists(path + ".tmp"));
}

// A write the file system refuses part way (here past RLIMIT_FSIZE, as a full disk would with ENOSPC): the
// error names the temporary file and the OS error, the temporary file is gone and the old file is intact.
TEST(CheckedFileTest, FailedWriteNamesPathAndLeavesNothing) {
  const std::string path = TempDir() + "/spec.yaml";
  ASSERT_TRUE(WriteFileAtomically(path, "old\n").ok());
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit small = before;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status = WriteFileAtomically(path, std::string(100000, 'x'));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "file too large: " + path + ".tmp");
  EXPECT_FALSE(Exists(path + ".tmp"));
  EXPECT_EQ(Read(path), "old\n");
}

TEST(CheckedFileTest, UnwritableDirectoryNamesPath) {
  const absl::Status status = WriteFileAtomically("/nonexistent-dir/spec.yaml", "a");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "no such file or directory: /nonexistent-dir/spec.yaml.tmp");
}

}  // namespace
}  // namespace nmsparse
