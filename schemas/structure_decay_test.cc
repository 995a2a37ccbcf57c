#include "schemas/structure_decay.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

using Stages = std::vector<std::pair<int, NM>>;

SparsityConfig Sdgf(StructureDecayType type, NM target, double dense = 0.0, double fine = 0.0) {
  SparsityConfig c;
  c.sparsity_type = SparsityType::kStructuredNM;
  c.structure_decay_flag = true;
  c.structure_decay_type = type;
  c.nm = target;
  c.nm_qkv = target;
  c.dense_fraction = dense;
  c.fine_tune_fraction = fine;
  return c;
}

TEST(StructureDecayTest, Sparsify1to8T350) {
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kSparsify, {1, 8}), 350),
            (Stages{{0, {7, 8}}, {87, {4, 8}}, {175, {2, 8}}, {262, {1, 8}}}));
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kSparsify, {1, 8}, 0.1, 0.1), 350),
            (Stages{{35, {7, 8}}, {105, {4, 8}}, {175, {2, 8}}, {245, {1, 8}}}));
}

TEST(StructureDecayTest, Fine1to8T350) {
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kFine, {1, 8}), 350),
            (Stages{{0, {8, 64}}, {87, {4, 32}}, {175, {2, 16}}, {262, {1, 8}}}));
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kFine, {1, 8}, 0.1, 0.1), 350),
            (Stages{{35, {8, 64}}, {105, {4, 32}}, {175, {2, 16}}, {245, {1, 8}}}));
}

TEST(StructureDecayTest, Densify1to8T350) {
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kDensify, {1, 8}), 350),
            (Stages{{0, {1, 64}}, {87, {1, 32}}, {175, {1, 16}}, {262, {1, 8}}}));
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kDensify, {1, 8}, 0.1, 0.1), 350),
            (Stages{{35, {1, 64}}, {105, {1, 32}}, {175, {1, 16}}, {245, {1, 8}}}));
}

TEST(StructureDecayTest, ThreeOfEightEndsAtTarget) {
  // The reference stops at 4:8; the spec replaces the last stage by the target.
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kSparsify, {3, 8}), 350),
            (Stages{{0, {7, 8}}, {175, {3, 8}}}));
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kFine, {3, 8}, 8),
            (std::vector<NM>{{24, 64}, {12, 32}, {6, 16}, {3, 8}}));
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kDensify, {3, 8}, 8),
            (std::vector<NM>{{3, 64}, {3, 32}, {3, 16}, {3, 8}}));
}

TEST(StructureDecayTest, TablesForCommonTargets) {
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kSparsify, {2, 4}, 8), (std::vector<NM>{{3, 4}, {2, 4}}));
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kSparsify, {1, 32}, 8),
            (std::vector<NM>{{31, 32}, {16, 32}, {8, 32}, {4, 32}, {2, 32}, {1, 32}}));
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kSparsify, {4, 4}, 8), (std::vector<NM>{{4, 4}}));
  // The paper's geometric schedule starts one stage earlier (16:128).
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kFine, {1, 8}, 16),
            (std::vector<NM>{{16, 128}, {8, 64}, {4, 32}, {2, 16}, {1, 8}}));
  EXPECT_EQ(StructureDecayTable(StructureDecayType::kFine, {1, 8}, 1), (std::vector<NM>{{1, 8}}));
}

TEST(StructureDecayTest, CoincidingStartsLaterStageWins) {
  // T = 2, K = 4: starts 0, 0, 1, 1.
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kSparsify, {1, 8}), 2),
            (Stages{{0, {4, 8}}, {1, {1, 8}}}));
  EXPECT_EQ(StructureDecayStages(Sdgf(StructureDecayType::kFine, {1, 8}), 1), (Stages{{0, {1, 8}}}));
}

TEST(StructureDecayTest, WithoutFlagOneStageAtDenseEnd) {
  SparsityConfig c = Sdgf(StructureDecayType::kFine, {1, 16}, 0.2);
  c.structure_decay_flag = false;
  EXPECT_EQ(StructureDecayStages(c, 10), (Stages{{2, {1, 16}}}));
  EXPECT_EQ(DenseEpochs(c, 10), 2);
  EXPECT_EQ(FineTuneEpochs(c, 10), 0);
}

TEST(StructureDecayTest, StageAtEpochAndQkvTarget) {
  SparsityConfig c = Sdgf(StructureDecayType::kSparsify, {1, 8}, 0.1, 0.1);
  EXPECT_EQ(StageAtEpoch(c, 350, c.nm, 0), (NM{7, 8}));  // Dense epoch: the first stage is reported.
  EXPECT_EQ(StageAtEpoch(c, 350, c.nm, 104), (NM{7, 8}));
  EXPECT_EQ(StageAtEpoch(c, 350, c.nm, 105), (NM{4, 8}));
  EXPECT_EQ(StageAtEpoch(c, 350, c.nm, 349), (NM{1, 8}));
  EXPECT_EQ(StructureDecayStages(c, 350, NM{2, 4}), (Stages{{35, {3, 4}}, {175, {2, 4}}}));
}

// issue 14: at 1 epoch a 1:8 SDGF plan is just 1:8, silently. The warning names what is skipped and the
// schedule that fits every stage.
TEST(StructureDecayTest, ShortScheduleWarningNamesSkippedStages) {
  const SparsityConfig c = Sdgf(StructureDecayType::kSparsify, {1, 8});
  EXPECT_EQ(SkippedStagesWarning(c, 1),
            "sparsity.structure_decay_flag: the structure decay plans 4 stages (7:8, 4:8, 2:8, 1:8) but "
            "the 1 epochs they divide (schedule.epochs) give 1 (1:8): 7:8, 4:8, 2:8 never train; "
            "schedule.epochs >= 4 gives each stage an epoch");
  EXPECT_EQ(SkippedStagesWarning(c, 4), "");
  EXPECT_EQ(SkippedStagesWarning(c, 350), "");
  SparsityConfig no_decay = c;
  no_decay.structure_decay_flag = false;
  EXPECT_EQ(SkippedStagesWarning(no_decay, 1), "");
  SparsityConfig srste = c;
  srste.sparsity_type = SparsityType::kSrste;  // SR-STE ignores the structure decay.
  EXPECT_EQ(SkippedStagesWarning(srste, 1), "");
}

}  // namespace
}  // namespace nmsparse
