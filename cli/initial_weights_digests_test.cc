// nmctl's model.initial_checkpoint_sha256 (issue 39): filled in from the file where nmctl can read it (the
// base, each grid value, a folder's model.safetensors, a file read in several chunks), checked where given,
// and required with a named error where the file is out of nmctl's reach.
#include "cli/initial_weights_digests.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "common/sha256_stream.h"
#include "gtest/gtest.h"
#include "schemas/spec_overrides.h"

namespace nmsparse::cli {
namespace {

constexpr char kAbc[] =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";  // SHA-256("abc").

class InitialWeightsDigestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/weights";
    mkdir(dir_.c_str(), 0755);
    mkdir((dir_ + "/folder").c_str(), 0755);
    std::ofstream(dir_ + "/abc.safetensors") << "abc";
    // Past one read chunk (1 MiB), so that the digest is of every chunk in order.
    big_.assign(3 * (1 << 20) + 17, 'x');
    for (size_t i = 0; i < big_.size(); i += 4099) big_[i] = static_cast<char>(i / 4099);
    std::ofstream(dir_ + "/folder/model.safetensors", std::ios::binary) << big_;
  }

  // Expands `sweep` as nmctl does: digests filled in, the runs expanded, then checked.
  absl::StatusOr<std::vector<ResolvedRun>> Expand(const std::string& sweep) {
    absl::StatusOr<v1::SweepSpec> spec = ParseSweepYaml(sweep, "sweep.yaml");
    if (!spec.ok()) return spec.status();
    WeightsDigests digests;
    if (absl::Status st = FillInitialWeightsDigests(&*spec, &digests); !st.ok()) return st;
    absl::StatusOr<std::vector<ResolvedRun>> runs = ExpandSweep(*spec);
    if (!runs.ok()) return runs.status();
    if (absl::Status st = CheckInitialWeightsDigests(*runs, &digests); !st.ok()) return st;
    return runs;
  }

  std::string Base(const std::string& model) {
    return "name: w\nbase:\n  model: {name: vit_nano_patch7_28" + model +
           "}\n  data: {dataset: synthetic}\n  schedule: {epochs: 1}\n";
  }

  std::string dir_, big_;
};

TEST_F(InitialWeightsDigestsTest, FillsTheBasesDigestFromTheFile) {
  auto runs = Expand(Base(", initial_checkpoint: " + dir_ + "/abc.safetensors"));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ((*runs)[0].config.model.initial_checkpoint_sha256, kAbc);
  EXPECT_NE((*runs)[0].canonical_yaml.find(std::string("initial_checkpoint_sha256: ") + kAbc),
            std::string::npos);
  Sha256Stream whole;
  whole.Update(big_.data(), big_.size());
  auto folder = Expand(Base(", initial_checkpoint: " + dir_ + "/folder"));
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ((*folder)[0].config.model.initial_checkpoint_sha256, whole.HexDigest());
}

TEST_F(InitialWeightsDigestsTest, AGivenDigestIsCheckedAgainstTheFile) {
  const std::string wrong(64, '0');
  auto runs =
      Expand(Base(", initial_checkpoint: " + dir_ + "/abc.safetensors, initial_checkpoint_sha256: " + wrong));
  ASSERT_FALSE(runs.ok());
  EXPECT_EQ(runs.status().message(),
            "run 0: model.initial_checkpoint_sha256: " + wrong + " is not the SHA-256 of " + dir_ +
                "/abc.safetensors on this host, " + kAbc + " (a changed file, or another file at this path)");
  EXPECT_TRUE(Expand(Base(", initial_checkpoint: " + dir_ +
                          "/abc.safetensors, initial_checkpoint_sha256: " + std::string(kAbc)))
                  .ok());
}

TEST_F(InitialWeightsDigestsTest, AFileOutOfReachNeedsItsDigest) {
  for (const std::string& path : {std::string("weights/w.safetensors"), dir_ + "/absent.safetensors"}) {
    auto runs = Expand(Base(", initial_checkpoint: " + path));
    ASSERT_FALSE(runs.ok()) << path;
    EXPECT_NE(runs.status().message().find("run 0: model.initial_checkpoint_sha256 is required with "
                                           "model.initial_checkpoint '" +
                                           path + "'"),
              std::string::npos)
        << runs.status();
    EXPECT_NE(runs.status().message().find("sha256sum FILE on the worker"), std::string::npos);
    EXPECT_TRUE(Expand(Base(", initial_checkpoint: " + path + ", initial_checkpoint_sha256: " + kAbc)).ok());
  }
  auto folder = Expand(Base(", initial_checkpoint: " + dir_));
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().message(),
            "model.initial_checkpoint: the folder " + dir_ + " has no model.safetensors");
}

// A grid axis over the file: each value gets its own file's digest (none inherits the base's), '' none; a
// value whose file is out of reach, and a random axis over the file, are refused naming the axis.
TEST_F(InitialWeightsDigestsTest, EachGridValueGetsItsFilesDigest) {
  const std::string sweep = Base(", initial_checkpoint: " + dir_ + "/abc.safetensors") +
                            "grid:\n  model.initial_checkpoint: ['" + dir_ + "/folder', '" + dir_ +
                            "/abc.safetensors', '']\n";
  auto runs = Expand(sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_NE((*runs)[0].content_hash, (*runs)[1].content_hash);
  EXPECT_EQ((*runs)[1].config.model.initial_checkpoint_sha256, kAbc);
  EXPECT_EQ((*runs)[2].config.model.initial_checkpoint_sha256, "");
  EXPECT_EQ((*runs)[2].canonical_yaml.find("initial_checkpoint"), std::string::npos);

  auto unreachable = Expand(Base("") + "grid:\n  from:\n    a: {model.initial_checkpoint: w.safetensors}\n");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(
      unreachable.status().message(),
      "grid axis 'from' value 'a': model.initial_checkpoint 'w.safetensors' cannot be read on this host: "
      "give model.initial_checkpoint_sha256 beside it (sha256sum FILE on the worker)");
  auto random = Expand(Base("") + "random:\n  model.initial_checkpoint: {choices: [a, b]}\n");
  ASSERT_FALSE(random.ok());
  EXPECT_NE(random.status().message().find("random axis model.initial_checkpoint"), std::string::npos)
      << random.status();
}

// nmctl fork --set model.initial_checkpoint=NEW: the fork's spec (the parent's with the overrides, as
// nmserver applies them) carries NEW's digest, not the parent's; a file out of reach without a digest, and a
// digest that is not the file's, are refused naming the keys; unsetting the file unsets its digest.
TEST_F(InitialWeightsDigestsTest, AForkOfAnotherFileGetsThatFilesDigest) {
  auto parent = ParseExperimentYaml("model: {name: vit_nano_patch7_28, initial_checkpoint: " + dir_ +
                                        "/folder, initial_checkpoint_sha256: " + std::string(64, 'f') + "}\n",
                                    "parent");
  ASSERT_TRUE(parent.ok()) << parent.status();
  auto fork = [&](std::vector<std::string> sets) -> absl::StatusOr<ExperimentConfig> {
    WeightsDigests digests;
    if (absl::Status st = FillForkWeightsDigest(&sets, &digests); !st.ok()) return st;
    return ApplySetOverrides(sets, *parent);
  };
  auto other = fork({"schedule.epochs=3", "model.initial_checkpoint=" + dir_ + "/abc.safetensors"});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->model.initial_checkpoint, dir_ + "/abc.safetensors");
  EXPECT_EQ(other->model.initial_checkpoint_sha256, kAbc);
  auto given = fork({"model.initial_checkpoint=" + dir_ + "/abc.safetensors",
                     "model.initial_checkpoint_sha256=" + absl::AsciiStrToUpper(kAbc)});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->model.initial_checkpoint_sha256, kAbc);
  auto none = fork({"model.initial_checkpoint="});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->model.initial_checkpoint, "");
  EXPECT_EQ(none->model.initial_checkpoint_sha256, "");

  auto out_of_reach = fork({"model.initial_checkpoint=../../w.safetensors"});
  ASSERT_FALSE(out_of_reach.ok());
  EXPECT_EQ(
      out_of_reach.status().message(),
      "--set model.initial_checkpoint=../../w.safetensors: nmctl cannot read ../../w.safetensors on this "
      "host (a relative path is opened by the worker from the run directory): give --set "
      "model.initial_checkpoint_sha256=DIGEST beside it (sha256sum FILE on the worker), else the fork "
      "keeps its parent's model.initial_checkpoint_sha256 and nmtrain refuses the new file");
  EXPECT_TRUE(fork({"model.initial_checkpoint=../../w.safetensors",
                    std::string("model.initial_checkpoint_sha256=") + kAbc})
                  .ok());
  const std::string wrong(64, '0');
  auto mismatch = fork(
      {"model.initial_checkpoint=" + dir_ + "/abc.safetensors", "model.initial_checkpoint_sha256=" + wrong});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().message(),
            "--set model.initial_checkpoint_sha256=" + wrong + " is not the SHA-256 of " + dir_ +
                "/abc.safetensors on this host, " + kAbc + " (a changed file, or another file at this path)");
}

}  // namespace
}  // namespace nmsparse::cli
