#include "schemas/spec_text.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "schemas/limits.h"

namespace nmsparse {
namespace {

std::string WriteFile(const std::string& name, size_t bytes) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << std::string(bytes, '#');
  return path;
}

TEST(ReadSpecTextTest, ReadsAFileAtTheLimit) {
  const std::string path = WriteFile("at_limit.yaml", limits::kMaxSpecFileBytes);
  auto text = ReadSpecText(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(static_cast<int64_t>(text->size()), limits::kMaxSpecFileBytes);
}

TEST(ReadSpecTextTest, RefusesALargerFileNamingItsSizeAndTheLimit) {
  const std::string path = WriteFile("big.yaml", 2'000'000);
  auto text = ReadSpecText(path);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(),
            path + ": 2,000,000 bytes, more than the limit of 1,048,576 bytes for a spec file");
}

TEST(ReadSpecTextTest, AMissingFileIsNotFound) {
  auto text = ReadSpecText("/nonexistent/spec.yaml");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(), "cannot read /nonexistent/spec.yaml");
}

}  // namespace
}  // namespace nmsparse
