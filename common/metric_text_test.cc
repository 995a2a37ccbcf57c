#include "common/metric_text.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

TEST(FormatMetricTest, SignificantDigits) {
  EXPECT_EQ(FormatMetric(81.5342), "81.53");
  EXPECT_EQ(FormatMetric(0.75341), "0.7534");
  EXPECT_EQ(FormatMetric(0.0005), "0.0005");
  EXPECT_EQ(FormatMetric(100), "100");
  EXPECT_EQ(FormatMetric(12345.67), "12346");
  // issue 14: FLOPs and other large counts with an SI prefix, not raw.
  EXPECT_EQ(FormatMetric(42859069440), "42.9G");
  EXPECT_EQ(FormatMetric(123456), "123k");
  EXPECT_EQ(FormatMetric(999999), "1M");
  EXPECT_EQ(FormatMetric(-2.5e6), "-2.5M");
  EXPECT_EQ(FormatMetric(1.5e20), "150E");
  EXPECT_EQ(FormatMetric(1.5e22), "1.5e+22");
}

}  // namespace
}  // namespace nmsparse
