#include "server/api/metric_intake.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "schemas/limits.h"

namespace nmsparse::server {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

v1::MetricPoint Point(const std::string& kind) {
  v1::MetricPoint p;
  p.set_kind(kind);
  p.set_epoch(3);
  p.set_step(120);
  (*p.mutable_values())["loss"] = 0.5;
  return p;
}

TEST(MetricIntakeTest, TakesEveryKindOfTheContract) {
  for (const char* kind : {"", "epoch", "step", "final", "progress"}) {
    EXPECT_TRUE(CheckMetricPoint(Point(kind)).ok()) << kind;
  }
}

TEST(MetricIntakeTest, RefusesAnUnknownKindNamingIt) {
  const absl::Status s = CheckMetricPoint(Point("finale"));
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(
      s.message(),
      "point.kind: \"finale\" is not a metric kind; one of \"epoch\", \"step\", \"final\", \"progress\"");
}

TEST(MetricIntakeTest, RefusesNonFiniteValuesNamingTheMetric) {
  for (double bad : {kNaN, kInf, -kInf}) {
    v1::MetricPoint p = Point("epoch");
    (*p.mutable_values())["top1"] = 0.7;
    (*p.mutable_values())["loss"] = bad;
    const absl::Status s = CheckMetricPoint(p);
    ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_EQ(s.message().rfind("point.values[\"loss\"]: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(std::isnan(bad) ? "NaN" : "inf"), std::string::npos) << s.message();
  }
}

TEST(MetricIntakeTest, BoundsEpochAndStep) {
  v1::MetricPoint p = Point("step");
  p.set_epoch(limits::kMaxMetricEpoch);
  p.set_step(static_cast<uint64_t>(limits::kMaxMetricStep));
  EXPECT_TRUE(CheckMetricPoint(p).ok());  // The bounds themselves are in.

  p.set_epoch(std::numeric_limits<uint32_t>::max());
  absl::Status s = CheckMetricPoint(p);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(), "point.epoch: 4294967295 is past the limit of 1,000,000");

  p.set_epoch(1);
  p.set_step(std::numeric_limits<uint64_t>::max());
  s = CheckMetricPoint(p);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(), "point.step: 18446744073709551615 is past the limit of 9,007,199,254,740,992");
}

}  // namespace
}  // namespace nmsparse::server
