#include "report/best_epoch.h"

#include "gtest/gtest.h"

namespace nmsparse::report {
namespace {

v1::MetricPoint Point(const std::string& kind, uint32_t epoch, double top1) {
  v1::MetricPoint p;
  p.set_kind(kind);
  p.set_epoch(epoch);
  (*p.mutable_values())["top1"] = top1;
  return p;
}

TEST(BestEpochTest, BestEpochPointReplacesTheFinalValue) {
  SweepData data;
  RunData& r = data.runs.emplace_back();
  r.run.set_state(v1::SUCCEEDED);
  (*r.run.mutable_final_metrics())["top1"] = 0.70;
  (*r.run.mutable_final_metrics())["params"] = 1000;
  r.curve = {Point("epoch", 1, 0.60), Point("epoch", 2, 0.75), Point("step", 2, 0.99),
             Point("epoch", 3, 0.70)};
  RunData& without_points = data.runs.emplace_back();
  (*without_points.run.mutable_final_metrics())["top1"] = 0.5;
  const std::vector<v1::Run> runs = AtBestEpoch(data, {"top1", "params"}, /*maximize=*/true);
  EXPECT_DOUBLE_EQ(runs[0].final_metrics().at("top1"), 0.75);  // Step points are not evaluations.
  EXPECT_DOUBLE_EQ(runs[0].final_metrics().at("params"), 1000);
  EXPECT_DOUBLE_EQ(runs[1].final_metrics().at("top1"), 0.5);
  EXPECT_DOUBLE_EQ(AtBestEpoch(data, {"top1"}, /*maximize=*/false)[0].final_metrics().at("top1"), 0.60);
}

}  // namespace
}  // namespace nmsparse::report
