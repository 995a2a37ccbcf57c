// Step progress, throughput and ETA of a run from its metric points.
#include "cli/run_progress.h"

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"

namespace nmsparse::cli {
namespace {

v1::MetricPoint Point(const std::string& kind, uint32_t attempt, uint32_t epoch, uint64_t step, int64_t at_ms,
                      double images_per_s = 0) {
  v1::MetricPoint p;
  p.set_kind(kind);
  p.set_attempt(attempt);
  p.set_epoch(epoch);
  p.set_step(step);
  p.set_at_ms(at_ms);
  if (images_per_s > 0) (*p.mutable_values())["images_per_s"] = images_per_s;
  return p;
}

TEST(RunProgressTest, StepsRateAndEtaFromPointTimes) {
  RunProgress progress(/*steps_per_epoch=*/100, /*epochs=*/4);
  EXPECT_EQ(progress.total_steps(), 400);
  EXPECT_FALSE(progress.eta_s().has_value());
  progress.Add(Point("step", 1, 0, 10, 1000));
  progress.Add(Point("step", 1, 0, 60, 6000, 1280.0));  // 50 steps in 5 s.
  EXPECT_EQ(progress.steps_done(), 60);
  EXPECT_DOUBLE_EQ(*progress.steps_per_s(), 10.0);
  EXPECT_DOUBLE_EQ(*progress.eta_s(), 34.0);  // 340 steps left at 10/s.
  EXPECT_EQ(progress.Text(), "step 60/400 (15%)  10 steps/s  1280 img/s  ETA 34s");
  progress.Add(Point("final", 1, 3, 400, 40000));
  EXPECT_TRUE(progress.finished());
  EXPECT_EQ(progress.Text().substr(0, 17), "step 400/400 (100");
}

// Issue 27: with log_every_steps 0 the trainer's progress points alone move the step count and the ETA.
TEST(RunProgressTest, ProgressPointsGiveStepsAndEta) {
  RunProgress progress(/*steps_per_epoch=*/10, /*epochs=*/2);
  progress.Add(Point("progress", 1, 0, 1, 1000));
  progress.Add(Point("progress", 1, 0, 5, 3000));  // 4 steps in 2 s.
  EXPECT_EQ(progress.Text(), "step 5/20 (25%)  2 steps/s  ETA 8s");
}

TEST(RunProgressTest, StepsPerEpochFromTheFirstEpochPointWhenTheSpecDoesNotTell) {
  RunProgress progress(std::nullopt, 3);
  progress.Add(Point("step", 1, 0, 20, 0));
  EXPECT_FALSE(progress.total_steps().has_value());
  EXPECT_EQ(progress.Text(), "step 20");
  progress.Add(Point("epoch", 1, 0, 50, 3000));
  EXPECT_EQ(progress.total_steps(), 150);
}

TEST(RunProgressTest, ALaterAttemptStartsANewRateWindow) {
  RunProgress progress(100, 2);
  progress.Add(Point("step", 1, 0, 10, 0));
  progress.Add(Point("step", 1, 0, 90, 1000));
  progress.Add(Point("step", 2, 0, 100, 60000));  // Resumed a minute later.
  EXPECT_FALSE(progress.steps_per_s().has_value());
  progress.Add(Point("step", 2, 1, 120, 62000));
  EXPECT_DOUBLE_EQ(*progress.steps_per_s(), 10.0);
  progress.Add(Point("step", 1, 0, 95, 1200));  // A stale attempt's point changes nothing.
  EXPECT_EQ(progress.steps_done(), 120);
}

TEST(RunProgressTest, ForSpecUsesTheSpecsSteps) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(
      "model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic, synthetic_size: 256, batch_size: 32}\n"
      "schedule: {epochs: 3}\n",
      "exp.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(RunProgress::ForSpec(CanonicalYaml(*config)).total_steps(), 24);
}

// The total spans the epochs the run trains, cooldown included, as the trainer's (issue 24).
TEST(RunProgressTest, ForSpecCountsTheCooldownEpochs) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentYaml(
      "model: {name: vit_nano_patch7_28}\ndata: {dataset: synthetic, synthetic_size: 256, batch_size: 32}\n"
      "schedule: {epochs: 3, sched: cosine, cooldown_epochs: 2}\n",
      "exp.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(RunProgress::ForSpec(CanonicalYaml(*config)).total_steps(), 40);
}

}  // namespace
}  // namespace nmsparse::cli
