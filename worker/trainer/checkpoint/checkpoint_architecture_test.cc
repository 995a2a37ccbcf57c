// A run keeps its architecture: resumed under a spec that builds another model, nmtrain refuses before
// loading any weight, naming each key that differs and both values; a checkpoint without the record (written
// before it was kept) is read as before.
#include "worker/trainer/checkpoint/checkpoint_architecture.h"

#include <torch/torch.h>

#include "gtest/gtest.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/trainer.h"
#include "worker/trainer/trainer_error.h"
#include "worker/trainer/trainer_testing.h"

namespace nmsparse {
namespace {

constexpr char kRun[] = R"(
seed: 3
model: {name: vit_nano_patch7_28}
data: {dataset: synthetic, synthetic_size: 64, batch_size: 16, eval_subset: 16}
schedule: {epochs: 2}
)";

TEST(CheckpointArchitectureTest, ResumeUnderAnotherArchitectureIsRefusedNamingTheKeys) {
  const ExperimentConfig config = ParseValidExperiment(kRun);
  CapturedRun run("architecture_refused");
  run.options.stop_after_steps = 2;
  ASSERT_EQ(RunTraining(config, run.options), kExitTerminated) << run.log.str();
  std::optional<std::string> recorded = ReadCheckpointArchitecture(run.options.out_dir);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_NE(recorded->find("depth: 2\n"), std::string::npos) << *recorded;

  ExperimentConfig deeper = config;
  deeper.model.depth = 3;
  deeper.model.embed_dim = 64;
  run.options.stop_after_steps = -1;
  run.options.resume = true;
  try {
    RunTraining(deeper, run.options);
    FAIL() << "expected a usage error";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("is of another architecture: model.embed_dim: 64 differs from the "
                                         "checkpoint's 32; model.depth: 3 differs from the checkpoint's 2"),
              std::string::npos)
        << e.what();
  }
  // The same model spelled otherwise resumes.
  ExperimentConfig respelled = config;
  respelled.model.depth = 2;
  EXPECT_EQ(RunTraining(respelled, run.options), kExitOk) << run.log.str();
}

TEST(CheckpointArchitectureTest, UnrecordedCheckpointIsAccepted) {
  const std::string dir = TestTempDir("architecture_unrecorded");
  torch::nn::Linear model(4, 2);
  torch::optim::AdamW optimizer(model->parameters());
  SaveCheckpoint(dir, *model, optimizer, TrainState{});
  EXPECT_EQ(ReadCheckpointArchitecture(dir), std::optional<std::string>(""));
  CheckCheckpointArchitecture("", "family: vit\ndepth: 2\n", dir);  // Does not throw.
  EXPECT_EQ(ReadCheckpointArchitecture(dir + "/none"), std::nullopt);
  EXPECT_THROW(CheckCheckpointArchitecture("family: vit\ndepth: 3\n", "family: vit\ndepth: 2\n", dir),
               TrainerError);
}

}  // namespace
}  // namespace nmsparse
