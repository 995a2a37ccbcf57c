#include "schemas/json_string.h"

#include <gtest/gtest.h>

namespace nmsparse {
namespace {

TEST(JsonStringTest, QuotesAndEscapes) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("top1"), "\"top1\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("x\ny\rz\tw"), "\"x\\ny\\rz\\tw\"");
  EXPECT_EQ(JsonString(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonString(std::string(1, '\0')), "\"\\u0000\"");
  EXPECT_EQ(JsonString("sparsity/blocks.0.mlp.fc1.weight"), "\"sparsity/blocks.0.mlp.fc1.weight\"");
  EXPECT_EQ(JsonString("\xc3\xa9"), "\"\xc3\xa9\"");  // bytes >= 0x80 (UTF-8) pass through
}

}  // namespace
}  // namespace nmsparse
