// Checkpoints keep the one they replace, and a latest checkpoint that cannot be read falls back to it.
#include "worker/trainer/checkpoint/checkpoint.h"

#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "gtest/gtest.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/checkpoint_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
  }
  // POSIX, not std::filesystem: pip's libtorch.so exports std::filesystem symbols that crash ours (2.11).
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Saves a checkpoint whose weights are all `value` and whose position is epoch `epoch`.
  void Save(float value, int epoch) {
    torch::NoGradGuard no_grad;
    for (auto& p : model_->parameters()) p.fill_(value);
    TrainState state;
    state.epoch = epoch;
    SaveCheckpoint(dir_, *model_, optimizer_, state);
  }

  // Loads into a fresh model; returns its position and sets `value` to its first weight.
  bool Load(TrainState* state, float* value) {
    torch::nn::Linear loaded(4, 2);
    torch::optim::AdamW optimizer(loaded->parameters());
    const bool found = LoadCheckpoint(dir_, *loaded, optimizer, state);
    *value = loaded->weight[0][0].item<float>();
    return found;
  }

  void Truncate(const std::string& path) { ASSERT_EQ(::truncate(path.c_str(), 100), 0) << path; }

  std::string dir_;
  torch::nn::Linear model_{4, 2};
  torch::optim::AdamW optimizer_{model_->parameters()};
};

TEST_F(CheckpointTest, KeepsTheReplacedCheckpointAsThePreviousOne) {
  Save(1.0f, 1);
  EXPECT_FALSE(Exists(PreviousCheckpointPath(dir_)));
  Save(2.0f, 2);
  EXPECT_TRUE(Exists(PreviousCheckpointPath(dir_)));
  EXPECT_FALSE(Exists(CheckpointPath(dir_) + ".tmp"));
  TrainState state;
  float value = 0;
  ASSERT_TRUE(Load(&state, &value));
  EXPECT_EQ(state.epoch, 2);
  EXPECT_EQ(value, 2.0f);
}

// The scheduler's state (plateau's best top-1 starts at -inf) comes back exactly; without one, empty.
TEST_F(CheckpointTest, KeepsTheLrSchedulerState) {
  TrainState saved;
  saved.lr_scheduler = {-HUGE_VAL, 2.0, 0.0, 0.1 * 0.5};
  SaveCheckpoint(dir_, *model_, optimizer_, saved);
  TrainState loaded;
  float value = 0;
  ASSERT_TRUE(Load(&loaded, &value));
  EXPECT_EQ(loaded.lr_scheduler, saved.lr_scheduler);
  Save(1.0f, 1);
  ASSERT_TRUE(Load(&loaded, &value));
  EXPECT_TRUE(loaded.lr_scheduler.empty());
}

TEST_F(CheckpointTest, DamagedLatestFallsBackToThePreviousOne) {
  Save(1.0f, 1);
  Save(2.0f, 2);
  Truncate(CheckpointPath(dir_));
  TrainState state;
  float value = 0;
  ASSERT_TRUE(Load(&state, &value));
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(value, 1.0f);
}

TEST_F(CheckpointTest, OnlyThePreviousLeftIsLoaded) {  // A crash between SaveCheckpoint's two renames.
  Save(1.0f, 1);
  Save(2.0f, 2);
  std::remove(CheckpointPath(dir_).c_str());
  TrainState state;
  float value = 0;
  ASSERT_TRUE(Load(&state, &value));
  EXPECT_EQ(state.epoch, 1);
}

TEST_F(CheckpointTest, BothDamagedIsAnErrorNamingBothFiles) {
  Save(1.0f, 1);
  Save(2.0f, 2);
  Truncate(CheckpointPath(dir_));
  Truncate(PreviousCheckpointPath(dir_));
  TrainState state;
  float value = 0;
  try {
    Load(&state, &value);
    FAIL() << "a damaged checkpoint loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(CheckpointPath(dir_)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(PreviousCheckpointPath(dir_)), std::string::npos) << e.what();
  }
}

// Low mantissa bits of the latest checkpoint's weights flipped: the file still loads (LibTorch does not check
// its CRCs), but its digest is not recorded, so the previous one is used and the damaged one named.
TEST_F(CheckpointTest, FlippedWeightBitsFallBackToThePreviousOne) {
  Save(1.0f, 1);
  Save(2.0f, 2);
  std::ifstream in(CheckpointPath(dir_), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string two("\x00\x00\x00\x40", 4);  // 2.0f, little-endian
  const size_t at = bytes.find(two + two);
  ASSERT_NE(at, std::string::npos);
  bytes[at] ^= 1;  // 2.0000002f
  std::ofstream(CheckpointPath(dir_), std::ios::binary | std::ios::trunc) << bytes;
  testing::internal::CaptureStderr();
  TrainState state;
  torch::nn::Linear loaded(4, 2);
  torch::optim::AdamW optimizer(loaded->parameters());
  std::string used;
  ASSERT_TRUE(LoadCheckpoint(dir_, *loaded, optimizer, &state, torch::kCPU, nullptr, &used));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(loaded->weight[0][0].item<float>(), 1.0f);
  EXPECT_EQ(used, PreviousCheckpointPath(dir_));
  EXPECT_NE(log.find("checkpoint " + CheckpointPath(dir_) + " is damaged"), std::string::npos) << log;
  EXPECT_THROW(LoadModelFromCheckpoint(CheckpointPath(dir_), *loaded), std::runtime_error);
}

// A disk that refuses the write (here past RLIMIT_FSIZE, as a full one does with ENOSPC): a storage error
// naming the temporary file and the OS error, no temporary file left, the checkpoints before it intact.
TEST_F(CheckpointTest, FailedWriteIsAStorageErrorAndLeavesNoTemporaryFile) {
  Save(1.0f, 1);
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit small = before;
  small.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  try {
    Save(2.0f, 2);
    ADD_FAILURE() << "the write did not fail";
  } catch (const TrainerError& e) {
    EXPECT_EQ(e.exit_code(), kExitStorage);
    EXPECT_EQ(std::string(e.what()),
              "cannot write the checkpoint: file too large: " + CheckpointPath(dir_) + ".tmp");
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  EXPECT_FALSE(Exists(CheckpointPath(dir_) + ".tmp"));
  TrainState state;
  float value = 0;
  ASSERT_TRUE(Load(&state, &value));
  EXPECT_EQ(state.epoch, 1);
}

TEST_F(CheckpointTest, NoCheckpointIsNotAnError) {
  TrainState state;
  float value = 0;
  EXPECT_FALSE(Load(&state, &value));
}

}  // namespace
}  // namespace nmsparse
