#include "worker/agent/metric_line_parser.h"

#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

TEST(MetricLineParserTest, EpochLineSplitsNumbersAndStrings) {
  const auto m = ParseMetricLine(
      R"({"kind":"epoch","epoch":3,"step":120,"loss":0.75,"top1":81.5,"phase":"sparse","nm_stage":"2:8"})");
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->is_final);
  EXPECT_EQ(m->point.kind(), "epoch");
  EXPECT_EQ(m->point.epoch(), 3u);
  EXPECT_EQ(m->point.step(), 120u);
  EXPECT_DOUBLE_EQ(m->point.values().at("loss"), 0.75);
  EXPECT_DOUBLE_EQ(m->point.values().at("top1"), 81.5);
  EXPECT_EQ(m->point.values().count("epoch"), 0u);
  EXPECT_EQ(m->point.labels().at("phase"), "sparse");
  EXPECT_EQ(m->point.labels().at("nm_stage"), "2:8");
  EXPECT_EQ(m->point.labels().count("kind"), 0u);
}

TEST(MetricLineParserTest, FinalLineIsMarked) {
  const auto m = ParseMetricLine("  {\"kind\":\"final\",\"epoch\":2,\"step\":9,\"top1\":12.5}\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->is_final);
  EXPECT_EQ(m->point.kind(), "final");
  EXPECT_DOUBLE_EQ(m->point.values().at("top1"), 12.5);
}

// Issue 27: nmtrain's progress lines (steps done, whatever log_every_steps says) are metric points too.
TEST(MetricLineParserTest, ProgressLineIsAPoint) {
  const auto m = ParseMetricLine(R"({"kind":"progress","epoch":0,"step":7})");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->point.kind(), "progress");
  EXPECT_EQ(m->point.step(), 7u);
  EXPECT_FALSE(m->is_final);
  EXPECT_TRUE(m->point.values().empty());
}

TEST(MetricLineParserTest, SlashNamesAndBoolsAndNestedValues) {
  const auto m = ParseMetricLine(
      R"({"kind":"step","epoch":0,"step":5,"sparsity/ff":0.5,"dense":true,"nested":{"a":1},"nothing":null})");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->point.values().at("sparsity/ff"), 0.5);
  EXPECT_DOUBLE_EQ(m->point.values().at("dense"), 1.0);
  EXPECT_EQ(m->point.values().count("nested"), 0u);
  EXPECT_EQ(m->point.values().count("nothing"), 0u);
}

TEST(MetricLineParserTest, OtherLinesAreLogLines) {
  EXPECT_FALSE(ParseMetricLine("epoch 3 loss 0.7").has_value());
  EXPECT_FALSE(ParseMetricLine("").has_value());
  EXPECT_FALSE(ParseMetricLine("{not json}").has_value());
  EXPECT_FALSE(ParseMetricLine(R"({"loss":1.0})").has_value());                  // no kind
  EXPECT_FALSE(ParseMetricLine(R"({"kind":"banner","epoch":1})").has_value());   // unknown kind
  EXPECT_FALSE(ParseMetricLine(R"({"kind":3,"epoch":1})").has_value());          // kind not a string
  EXPECT_FALSE(ParseMetricLine(R"({"kind":"epoch","epoch":-1})").has_value());   // negative counter
  EXPECT_FALSE(ParseMetricLine(R"({"kind":"epoch","epoch":1.5})").has_value());  // fractional counter
  EXPECT_FALSE(ParseMetricLine(R"({"kind":"epoch","epoch":"2"})").has_value());  // counter as string
  EXPECT_FALSE(ParseMetricLine(R"([{"kind":"epoch"}])").has_value());
}

}  // namespace
}  // namespace nmsparse::agent
