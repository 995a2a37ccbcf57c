// Repeated augmentation and layer-wise lr decay through the training loop: the steps an epoch follow timm's
// RepeatAugSampler, and the schedule's rate reaches each layer scaled.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

std::string Spec(const std::string& extra_data, const std::string& extra_optimizer) {
  return "seed: 1\nmodel: {name: vit_nano_patch7_28}\n"
         "data: {dataset: fashion_mnist, train_subset: 600, eval_subset: 100, batch_size: 32" +
         extra_data + "}\noptimizer: {lr: 0.003, weight_decay: 0.05" + extra_optimizer +
         "}\nschedule: {epochs: 1, warmup_epochs: 0}\n";
}

// 600 images: 600 // 32 = 18 steps; with 3 repeats each rank reads 600 // 256 * 256 = 512: 16 steps.
TEST(RecipeSamplingTest, RepeatedAugmentationCountsTimmsSelectedSamples) {
  const auto config = ParseValidExperiment(Spec(", aug_repeats: 3", ""));
  std::ostringstream described;
  ASSERT_EQ(DescribeRun(config, described), kExitOk);
  EXPECT_NE(described.str().find("16 optimizer steps per epoch"), std::string::npos) << described.str();
  CapturedRun run("repeats");
  ASSERT_EQ(RunTraining(config, run.options), kExitOk) << run.log.str();
  EXPECT_EQ(LastMetricFields(run.metrics.str(), "epoch")["step"], "16") << run.metrics.str();
}

std::string FinalLoss(const std::string& spec, const std::string& name) {
  CapturedRun run(name);
  EXPECT_EQ(RunTraining(ParseValidExperiment(spec), run.options), kExitOk) << run.log.str();
  return LastMetricFields(run.metrics.str(), "epoch")["loss"];
}

// layer_decay 1 scales nothing: the per-layer groups train bit for bit as the two plain groups (AdamW is per
// parameter). 0.5 slows every layer but the head: another loss.
TEST(RecipeSamplingTest, LayerDecayScalesTheRatesTheLoopSets) {
  const std::string off = FinalLoss(Spec("", ""), "ld_off");
  ASSERT_FALSE(off.empty());
  EXPECT_EQ(FinalLoss(Spec("", ", layer_decay: 1.0"), "ld_one"), off);
  EXPECT_NE(FinalLoss(Spec("", ", layer_decay: 0.5"), "ld_half"), off);
}

}  // namespace
}  // namespace nmsparse
