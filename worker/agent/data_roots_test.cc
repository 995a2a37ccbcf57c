// Confined dataset paths: what nmtrain would read, and the check against the worker's roots after symlinks.
#include "worker/agent/data_roots.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace nmsparse::agent {
namespace {

class DataRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    base_ = std::string(tmp ? tmp : "/tmp") + "/data_roots_" + std::to_string(getpid());
    mkdir(base_.c_str(), 0700);
    mkdir((base_ + "/data").c_str(), 0700);
    mkdir((base_ + "/data/shards").c_str(), 0700);
    mkdir((base_ + "/other").c_str(), 0700);
    symlink((base_ + "/other").c_str(), (base_ + "/data/escape").c_str());
    symlink((base_ + "/data/shards").c_str(), (base_ + "/other/in").c_str());
  }
  std::string base_;
};

TEST_F(DataRootsTest, PathsUnderARootPass) {
  const std::vector<std::string> roots = {base_ + "/data"};
  EXPECT_TRUE(CheckUnderDataRoots(base_ + "/data", roots).ok());
  EXPECT_TRUE(CheckUnderDataRoots(base_ + "/data/shards", roots).ok());
  EXPECT_TRUE(CheckUnderDataRoots(base_ + "/other/in", roots).ok());  // A link from outside into a root.
}

TEST_F(DataRootsTest, EscapesAreRefusedNamingPathAndRoots) {
  const std::vector<std::string> roots = {base_ + "/data", "/usr/share/datasets/fashion-mnist"};
  absl::Status dotdot = CheckUnderDataRoots(base_ + "/data/../other", roots);
  EXPECT_EQ(dotdot.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(dotdot.message(), "data.path " + base_ + "/data/../other (resolves to " + base_ +
                                  "/other) is outside this worker's data roots [" + base_ +
                                  "/data, /usr/share/datasets/fashion-mnist] (nmworker --data_root)");
  EXPECT_FALSE(CheckUnderDataRoots(base_ + "/data/escape", roots).ok());  // A link out of a root.
  absl::Status etc = CheckUnderDataRoots("/etc/shadow", roots);
  EXPECT_NE(etc.message().find("data.path /etc/shadow is outside this worker's data roots"),
            std::string::npos)
      << etc;
  // A sibling whose name starts like the root is not under it.
  mkdir((base_ + "/data2").c_str(), 0700);
  EXPECT_FALSE(CheckUnderDataRoots(base_ + "/data2", roots).ok());
}

TEST_F(DataRootsTest, MissingPathsAreRefused) {
  absl::Status s = CheckUnderDataRoots(base_ + "/data/nope", {base_ + "/data"});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("does not exist"), std::string::npos) << s;
}

TEST_F(DataRootsTest, DatasetDirectoryIsWhatNmtrainReads) {
  EXPECT_EQ(*DatasetDirectory("data: {dataset: shards, path: /etc/shadow}\n", "/w/runs/1"), "/etc/shadow");
  EXPECT_EQ(*DatasetDirectory("data: {dataset: shards, path: ../x}\n", "/w/runs/1"), "/w/runs/1/../x");
  EXPECT_EQ(*DatasetDirectory("data: {dataset: synthetic}\n", "/w/runs/1"), "");
  unsetenv("NMSPARSE_FASHION_MNIST");
  EXPECT_EQ(*DatasetDirectory("name: x\n", "/w/runs/1"), "/usr/share/datasets/fashion-mnist");
  setenv("NMSPARSE_FASHION_MNIST", "/data/fmnist", 1);
  EXPECT_EQ(*DatasetDirectory("data: {dataset: fashion_mnist}\n", "/w/runs/1"), "/data/fmnist");
  EXPECT_EQ(DefaultDataRoots("/w"),
            (std::vector<std::string>{"/usr/share/datasets/fashion-mnist", "/data/fmnist", "/w"}));
  unsetenv("NMSPARSE_FASHION_MNIST");
  EXPECT_EQ(DefaultDataRoots("/w"), (std::vector<std::string>{"/usr/share/datasets/fashion-mnist", "/w"}));
  EXPECT_FALSE(DatasetDirectory("data: [unclosed\n", "/w").ok());
}

// A relative data.path is read from the run directory, which does not exist before the run's first attempt:
// accepted when it lands under a root, refused when ".." or a symlink takes it out of them.
TEST_F(DataRootsTest, RelativePathsResolveFromTheRunDirectoryBeforeItExists) {
  const std::vector<std::string> roots = {base_ + "/data"};
  const std::string run_dir = base_ + "/data/work/runs/7";  // Not there yet.
  const auto spec = [](const std::string& path) { return "data: {dataset: shards, path: " + path + "}\n"; };
  EXPECT_TRUE(CheckRunDataAccess(spec("../../../shards"), run_dir, roots).ok())
      << CheckRunDataAccess(spec("../../../shards"), run_dir, roots);
  struct stat info;
  EXPECT_EQ(stat(run_dir.c_str(), &info), 0) << "the run directory is created for the check";
  EXPECT_EQ(CheckRunDataAccess(spec("../../../../other"), run_dir, roots).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckRunDataAccess(spec("../../../escape"), run_dir, roots).code(),
            absl::StatusCode::kPermissionDenied);  // A link out of the root.
  EXPECT_TRUE(CheckRunDataAccess(spec(base_ + "/data/shards"), base_ + "/data/work/runs/8", roots).ok());
  EXPECT_NE(stat((base_ + "/data/work/runs/8").c_str(), &info), 0) << "only a relative path needs it";
  EXPECT_TRUE(CheckRunDataAccess("data: {dataset: synthetic}\n", run_dir, roots).ok());
}

// model.initial_checkpoint is data too (issue 39): a weights file under a root passes, one outside (or a
// link out of a root) is refused naming the key, alongside a dataset that would pass.
TEST_F(DataRootsTest, InitialWeightsAreConfinedLikeData) {
  const std::vector<std::string> roots = {base_ + "/data"};
  const std::string run_dir = base_ + "/data/work/runs/9";
  const auto spec = [](const std::string& path) {
    return "model: {name: vit_nano_patch7_28, initial_checkpoint: " + path +
           "}\ndata: {dataset: synthetic}\n";
  };
  EXPECT_EQ(*InitialCheckpointPath(spec("w.safetensors"), "/w/runs/1"), "/w/runs/1/w.safetensors");
  EXPECT_EQ(*InitialCheckpointPath("model: {name: x}\n", "/w/runs/1"), "");
  EXPECT_TRUE(CheckRunDataAccess(spec(base_ + "/data/shards"), run_dir, roots).ok());
  EXPECT_TRUE(CheckRunDataAccess(spec("../../../shards"), run_dir, roots).ok());
  absl::Status outside = CheckRunDataAccess(spec(base_ + "/other"), run_dir, roots);
  EXPECT_EQ(outside.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(outside.message(), "model.initial_checkpoint " + base_ +
                                   "/other is outside this worker's data roots [" + base_ +
                                   "/data] (nmworker --data_root)");
  EXPECT_EQ(CheckRunDataAccess(spec(base_ + "/data/escape"), run_dir, roots).code(),
            absl::StatusCode::kPermissionDenied);  // A link out of the root.
  absl::Status missing = CheckRunDataAccess(spec(base_ + "/data/none.safetensors"), run_dir, roots);
  EXPECT_NE(
      missing.message().find("model.initial_checkpoint " + base_ + "/data/none.safetensors does not exist"),
      std::string::npos)
      << missing;
}

}  // namespace
}  // namespace nmsparse::agent
