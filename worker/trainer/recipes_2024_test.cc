// The 2024 recipes (docs/sparsity-method.md §12) through the real training loop on the tiny ViT and SwinV2:
// a run stopped mid-epoch and resumed ends with the weights of an uninterrupted one, which needs the frozen
// S-STE scale from the checkpoint and the MVUE draws of each step from (seed, step), and STEP's switch state
// and frozen second moment (the interruption falls after its switch).
#include <torch/torch.h>

#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "schemas/experiment_config.h"
#include "worker/trainer/checkpoint.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

void ExpectResumeIsExact(const std::string& model, const std::string& sparsity, const std::string& name,
                         std::string* log = nullptr) {
  const auto config = ParseValidExperiment(R"(
seed: 7
model: {name: )" + model + R"(}
data: {dataset: fashion_mnist, train_subset: 128, eval_subset: 32, batch_size: 32}
optimizer: {lr: 0.002, clip_grad_norm: 1.0}
schedule: {epochs: 2, warmup_epochs: 0.5}
sparsity: )" + sparsity + "\n");
  std::ostringstream sink;
  TrainerOptions straight;
  straight.out_dir = TestTempDir(name + "_straight");
  straight.metrics = straight.log = &sink;
  ASSERT_EQ(RunTraining(config, straight), kExitOk) << sink.str();

  TrainerOptions interrupted = straight;
  interrupted.out_dir = TestTempDir(name + "_interrupted");
  interrupted.stop_after_steps = 6;  // Mid-way through the second epoch (4 steps per epoch).
  interrupted.resume = true;
  ASSERT_EQ(RunTraining(config, interrupted), kExitTerminated) << sink.str();
  interrupted.stop_after_steps = -1;
  ASSERT_EQ(RunTraining(config, interrupted), kExitOk) << sink.str();

  SCOPED_TRACE(name);
  ExpectSameCheckpointWeights(model, straight.out_dir, interrupted.out_dir);
  EXPECT_NE(sink.str().find("\"phase\":\"sparse\""), std::string::npos) << sink.str();
  if (log != nullptr) *log = sink.str();
}

TEST(Recipes2024Test, SsteResumesExactlyOnVit) {
  ExpectResumeIsExact("vit_nano_patch7_28", "{recipe: SSTE, sparsity_loc: \"FF,Q,K,V,O\"}", "sste_vit");
}

TEST(Recipes2024Test, SsteResumesExactlyOnSwinV2) {
  ExpectResumeIsExact("swinv2_micro_window7_28", "{recipe: SSTE, sparsity_loc: FF}", "sste_swin");
}

// STEP at its defaults over 8 steps: T_min = 0, T_max = 4, so the switch comes after step 5 at the latest,
// and the interruption after step 6 falls in the frozen-moment phase. The first epoch (steps 1-4) reports the
// dense phase, the last the sparse one.
void ExpectStepResumes(const std::string& model, const std::string& locations, const std::string& name) {
  std::string out;
  ExpectResumeIsExact(model, "{recipe: STEP, sparsity_loc: \"" + locations + "\"}", name, &out);
  const size_t dense = out.find("\"phase\":\"dense\"");
  ASSERT_NE(dense, std::string::npos) << out;
  EXPECT_LT(dense, out.find("\"phase\":\"sparse\"")) << out;
}

TEST(Recipes2024Test, StepResumesExactlyOnVit) {
  ExpectStepResumes("vit_nano_patch7_28", "FF,Q,K,V,O", "step_vit");
}

TEST(Recipes2024Test, StepResumesExactlyOnSwinV2) {
  ExpectStepResumes("swinv2_micro_window7_28", "FF", "step_swin");
}

}  // namespace
}  // namespace nmsparse
