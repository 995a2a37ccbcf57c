// JSON text with display controls escaped inside its strings, everything else byte for byte.
#include "common/safe_json.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

TEST(SafeJsonTest, EscapesDisplayControlsAndInvalidBytes) {
  EXPECT_EQ(SafeJsonText("{\"name\": \"a\u202eb\u0085\x7f\"}\n"),
            "{\"name\": \"a\\u202eb\\u0085\\u007f\"}\n");
  EXPECT_EQ(SafeJsonText("[\"\xff\"]"), "[\"\\ufffd\"]");
}

TEST(SafeJsonTest, LeavesOrdinaryJsonAlone) {
  const std::string json = "{\n  \"a\": \"\\u001b x \u00b1 \u4e2d\",\n\t\"b\": [1, 2.5e3, null]\n}";
  EXPECT_EQ(SafeJsonText(json), json);
}

}  // namespace
}  // namespace nmsparse
