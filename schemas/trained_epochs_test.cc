// TrainedEpochs against train.py's num_epochs: the trained_epochs of worker/trainer/testdata/
// timm_lr_schedules.txt (timm 1.0.31), a case per scheduler kind.
#include "schemas/trained_epochs.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

ScheduleConfig Schedule(const std::string& sched, int epochs, double warmup_epochs, bool prefix,
                        int cooldown) {
  ScheduleConfig s;
  s.sched = sched;
  s.epochs = epochs;
  s.warmup_epochs = warmup_epochs;
  s.warmup_prefix = prefix;
  s.cooldown_epochs = cooldown;
  return s;
}

TEST(TrainedEpochsTest, CosineCountsCyclesPrefixAndCooldown) {
  EXPECT_EQ(TrainedEpochs(Schedule("cosine", 6, 2, true, 2)), 10);    // cosine_updates_prefix_cooldown
  EXPECT_EQ(TrainedEpochs(Schedule("cosine", 20, 3, false, 3)), 23);  // cosine_epochs_k_decay
  ScheduleConfig two_cycles = Schedule("cosine", 7, 0, false, 1);
  two_cycles.lr_cycle_limit = 2;
  EXPECT_EQ(TrainedEpochs(two_cycles), 15);  // cosine_epochs_two_cycles
  ScheduleConfig cycle_mul = Schedule("cosine", 5, 1, true, 0);
  cycle_mul.lr_cycle_limit = 3;
  cycle_mul.lr_cycle_mul = 2.0;
  EXPECT_EQ(TrainedEpochs(cycle_mul), 36);  // cosine_updates_cycle_mul: 5 + 10 + 20 + 1
}

TEST(TrainedEpochsTest, StepMultistepPlateauConstantCountPrefixNotCooldown) {
  EXPECT_EQ(TrainedEpochs(Schedule("step", 12, 2, true, 0)), 14);        // step_epochs_prefix
  EXPECT_EQ(TrainedEpochs(Schedule("step", 8, 1, false, 0)), 8);         // step_updates
  EXPECT_EQ(TrainedEpochs(Schedule("multistep", 8, 1, true, 0)), 9);     // multistep_updates_prefix
  EXPECT_EQ(TrainedEpochs(Schedule("multistep", 10, 2, false, 0)), 10);  // multistep_epochs
  EXPECT_EQ(TrainedEpochs(Schedule("plateau", 22, 2, false, 0)), 22);    // plateau
  EXPECT_EQ(TrainedEpochs(Schedule("constant", 6, 3, false, 0)), 6);     // constant_warmup
  EXPECT_EQ(TrainedEpochs(Schedule("step", 8, 0, false, 3)), 8);         // timm: no cooldown without cycles
}

// The sparsity schedule divides schedule.epochs alone (the reference's total_epochs = args.epochs).
TEST(TrainedEpochsTest, SparsityEpochsLeaveOutCooldownAndPrefix) {
  EXPECT_EQ(SparsityEpochs(Schedule("cosine", 6, 2, true, 2)), 6);
  EXPECT_EQ(SparsityEpochs(Schedule("warmup_cosine", 10, 2, false, 1)), 10);
}

TEST(TrainedEpochsTest, WarmupCosineAddsCooldownOnly) {
  EXPECT_EQ(TrainedEpochs(Schedule("warmup_cosine", 10, 2, false, 1)), 11);  // warmup_cosine
  EXPECT_EQ(TrainedEpochs(Schedule("warmup_cosine", 10, 2, false, 0)), 10);
}

}  // namespace
}  // namespace nmsparse
