#include "worker/sparsity/phase_schedule.h"

#include <gtest/gtest.h>

namespace nmsparse {
namespace {

SparsityConfig Config(double dense, double fine_tune) {
  SparsityConfig config;
  config.sparsity_type = SparsityType::kStructuredNM;
  config.dense_fraction = dense;
  config.fine_tune_fraction = fine_tune;
  return config;
}

TEST(PhaseScheduleTest, AllSparseByDefault) {
  auto schedule = PhaseSchedule::Create(Config(0, 0), 10);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->segments().size(), 1u);
  const PhaseState first = schedule->At(0, 0, 100);
  EXPECT_EQ(first.kind, PhaseKind::kSparse);
  EXPECT_EQ(first.sparse_step, 0);
  EXPECT_EQ(schedule->At(9, 999, 100).sparse_step, 999);
}

TEST(PhaseScheduleTest, DenseStartThenSparseWithJFromTheFirstSparseStep) {
  auto schedule = PhaseSchedule::Create(Config(0.1, 0), 30);  // d = 3.
  ASSERT_TRUE(schedule.ok());
  EXPECT_EQ(schedule->dense_epochs(), 3);
  EXPECT_EQ(schedule->At(0, 0, 50).kind, PhaseKind::kDense);
  EXPECT_EQ(schedule->At(2, 149, 50).kind, PhaseKind::kDense);
  EXPECT_EQ(schedule->At(2, 149, 50).sparse_step, 0);
  const PhaseState start = schedule->At(3, 150, 50);
  EXPECT_EQ(start.kind, PhaseKind::kSparse);
  EXPECT_EQ(start.sparse_step, 0);
  EXPECT_EQ(schedule->At(4, 217, 50).sparse_step, 67);
}

// The reference lays its phases over train.py's `epochs` (T) while the run trains T + cooldown_epochs
// (train.py: total_epochs = args.epochs; sparse_functions.py: fine-tune while epoch > total - fine_tune).
TEST(PhaseScheduleTest, CooldownEpochsFollowTheReferenceRulesPastT) {
  auto fine = PhaseSchedule::Create(Config(0.1, 0.1), /*total_epochs=*/35, /*span_epochs=*/30);  // d=f=3.
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->span_epochs(), 30);
  EXPECT_EQ(fine->total_epochs(), 35);
  EXPECT_EQ(fine->At(2, 0, 10).kind, PhaseKind::kDense);      // Not int(0.1 * 35) = 3 either way.
  EXPECT_EQ(fine->At(27, 270, 10).kind, PhaseKind::kSparse);  // 27 > 30 - 3 is false.
  EXPECT_EQ(fine->At(28, 280, 10).kind, PhaseKind::kFineTune);
  const PhaseState cooldown = fine->At(34, 349, 10);
  EXPECT_EQ(cooldown.kind, PhaseKind::kFineTune);
  EXPECT_EQ(cooldown.sparse_step, 349 - 30);  // j keeps counting from the first sparse step.

  // f = 0: no fine-tune within T; epoch T is still sparse (T > T - 0 is false), the later ones fine-tune.
  auto none = PhaseSchedule::Create(Config(0, 0), 12, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->At(9, 90, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(none->At(10, 100, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(none->At(11, 110, 10).kind, PhaseKind::kFineTune);

  // f = 1: none within T, every epoch after it.
  auto one = PhaseSchedule::Create(Config(0, 0.1), 12, 10);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->At(9, 90, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(one->At(10, 100, 10).kind, PhaseKind::kFineTune);

  // A phase list divides T; its last phase continues.
  SparsityConfig phases = Config(0, 0);
  phases.phases = {{PhaseKind::kSparse, 0.8}, {PhaseKind::kDense, 0.2}};
  auto list = PhaseSchedule::Create(phases, 12, 10);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->At(7, 70, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(list->At(8, 80, 10).kind, PhaseKind::kDense);
  EXPECT_EQ(list->At(11, 110, 10).kind, PhaseKind::kDense);
  EXPECT_EQ(list->segments().back().end_epoch, 12);

  EXPECT_FALSE(PhaseSchedule::Create(Config(0, 0), 9, 10).ok());  // The span cannot exceed the run.
}

TEST(PhaseScheduleTest, FineTuneStartsStrictlyAfterTMinusF) {
  auto schedule = PhaseSchedule::Create(Config(0, 0.1), 30);  // f = 3: epochs > 27, i.e. 28 and 29.
  ASSERT_TRUE(schedule.ok());
  EXPECT_EQ(schedule->fine_tune_epochs(), 3);
  EXPECT_EQ(schedule->At(27, 0, 1).kind, PhaseKind::kSparse);
  EXPECT_EQ(schedule->At(28, 0, 1).kind, PhaseKind::kFineTune);
  EXPECT_EQ(schedule->At(29, 0, 1).kind, PhaseKind::kFineTune);
  // j keeps counting through the fine-tune window.
  EXPECT_EQ(schedule->At(28, 2810, 100).sparse_step, 2810);
  // f = 1 leaves no epoch > T - 1 inside the run.
  auto one = PhaseSchedule::Create(Config(0, 0.1), 10);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->At(9, 0, 1).kind, PhaseKind::kSparse);
}

TEST(PhaseScheduleTest, DenseSparseFineTune) {
  auto schedule = PhaseSchedule::Create(Config(0.1, 0.1), 100);
  ASSERT_TRUE(schedule.ok());
  ASSERT_EQ(schedule->segments().size(), 3u);
  EXPECT_EQ(schedule->segments()[0].end_epoch, 10);
  EXPECT_EQ(schedule->segments()[1].begin_epoch, 10);
  EXPECT_EQ(schedule->segments()[1].end_epoch, 91);
  EXPECT_EQ(schedule->segments()[2].begin_epoch, 91);
  EXPECT_EQ(schedule->At(120, 0, 1).kind, PhaseKind::kFineTune);  // Clamped past the end.
}

TEST(PhaseScheduleTest, SparseFirstThenDense) {
  SparsityConfig config = Config(0, 0);
  config.phases = {{PhaseKind::kSparse, 0.8}, {PhaseKind::kDense, 0.2}};
  auto schedule = PhaseSchedule::Create(config, 10);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->segments().size(), 2u);
  EXPECT_EQ(schedule->At(0, 0, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(schedule->At(7, 79, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(schedule->At(7, 79, 10).sparse_step, 79);
  EXPECT_EQ(schedule->At(8, 80, 10).kind, PhaseKind::kDense);
  EXPECT_EQ(schedule->At(9, 99, 10).kind, PhaseKind::kDense);
}

TEST(PhaseScheduleTest, GeneralListCountsJPerSparseRun) {
  SparsityConfig config = Config(0, 0);
  // 0.7 + 0.1 is 0.7999999999999999 in double: the boundary must still be epoch 8.
  config.phases = {{PhaseKind::kDense, 0.2},
                   {PhaseKind::kSparse, 0.5},
                   {PhaseKind::kFineTune, 0.1},
                   {PhaseKind::kDense, 0.1},
                   {PhaseKind::kSparse, 0.1}};
  auto schedule = PhaseSchedule::Create(config, 10);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->At(1, 10, 10).kind, PhaseKind::kDense);
  EXPECT_EQ(schedule->At(2, 20, 10).sparse_step, 0);
  EXPECT_EQ(schedule->At(7, 75, 10).kind, PhaseKind::kFineTune);
  EXPECT_EQ(schedule->At(7, 75, 10).sparse_step, 55);
  EXPECT_EQ(schedule->At(8, 80, 10).kind, PhaseKind::kDense);
  EXPECT_EQ(schedule->At(9, 93, 10).kind, PhaseKind::kSparse);
  EXPECT_EQ(schedule->At(9, 93, 10).sparse_step, 3);
}

TEST(PhaseScheduleTest, BadInputIsAnError) {
  SparsityConfig config = Config(0, 0);
  config.phases = {{PhaseKind::kSparse, 0.5}, {PhaseKind::kDense, 0.2}};
  auto bad_sum = PhaseSchedule::Create(config, 10);
  ASSERT_FALSE(bad_sum.ok());
  EXPECT_NE(bad_sum.status().message().find("sum"), std::string::npos);
  config.phases = {{PhaseKind::kSparse, 1.0}, {PhaseKind::kDense, 0.0}};
  EXPECT_FALSE(PhaseSchedule::Create(config, 10).ok());
  EXPECT_FALSE(PhaseSchedule::Create(Config(1.5, 0), 10).ok());
  EXPECT_FALSE(PhaseSchedule::Create(Config(0, 0), 0).ok());
  EXPECT_EQ(PhaseName(PhaseKind::kFineTune), "fine_tune");
}

}  // namespace
}  // namespace nmsparse
