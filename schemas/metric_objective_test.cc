#include "schemas/metric_objective.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nmsparse {
namespace {

using ::testing::HasSubstr;

TEST(ObjectiveMaximizesTest, StandardMetricsTakeTheirDeclaredDirection) {
  for (const char* up : {"top1", "top5", "best_top1"})
    EXPECT_TRUE(*ObjectiveMaximizes(up, "", "k", "h")) << up;
  for (const char* down : {"loss", "eval_loss"})
    EXPECT_FALSE(*ObjectiveMaximizes(down, "", "k", "h")) << down;
}

TEST(ObjectiveMaximizesTest, AnExplicitModeWins) {
  EXPECT_FALSE(*ObjectiveMaximizes("top1", "min", "k", "h"));
  EXPECT_TRUE(*ObjectiveMaximizes("loss", "max", "k", "h"));
  EXPECT_TRUE(*ObjectiveMaximizes("acc", "max", "k", "h"));
}

TEST(ObjectiveMaximizesTest, AnUndeclaredMetricWithoutModeIsRefusedNamingKeyAndMetric) {
  absl::StatusOr<bool> r = ObjectiveMaximizes("acc", "", "search.metric", "say mode: max or mode: min");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("search.metric: metric 'acc' has no declared direction"));
  EXPECT_THAT(r.status().message(), HasSubstr("loss down"));
  EXPECT_THAT(r.status().message(), HasSubstr("say mode: max or mode: min"));
}

}  // namespace
}  // namespace nmsparse
