// Issue 36: numbers are canonical before hashing, so that one run spelled two ways is one run (reused, not
// trained again): 0.1 = 0.10 = 1e-1 = .1 and -0.0 = 0.0, in grid labels, choices and list keys alike.
// Log-uniform draws are exact at their bounds: min == max draws that value, and no draw leaves [min, max].
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

constexpr char kBase[] = R"(name: c
base:
  name: c
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 4}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)";

std::vector<ResolvedRun> Expand(const std::string& axes) {
  absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(std::string(kBase) + axes, "sweep.yaml");
  EXPECT_TRUE(sweep.ok()) << sweep.status();
  if (!sweep.ok()) return {};
  absl::StatusOr<std::vector<ResolvedRun>> runs = ExpandSweep(*sweep);
  EXPECT_TRUE(runs.ok()) << runs.status();
  return runs.ok() ? *runs : std::vector<ResolvedRun>();
}

std::set<std::string> Hashes(const std::vector<ResolvedRun>& runs) {
  std::set<std::string> hashes;
  for (const ResolvedRun& r : runs) hashes.insert(r.content_hash);
  return hashes;
}

TEST(SweepCanonicalTest, OneNumberSpelledEightWaysIsOneRun) {
  const std::vector<ResolvedRun> runs =
      Expand("grid:\n  optimizer.lr: [0.1, 0.10, 1e-1, 1.0e-1, 1E-1, +0.1, .1, 0.1e0]\n");
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(Hashes(runs).size(), 1u) << runs[0].canonical_yaml << "\n" << runs[1].canonical_yaml;
  EXPECT_EQ(runs[1].labels[0].second, "0.10");  // The label stays as written: it is the user's text.
}

TEST(SweepCanonicalTest, NegativeZeroIsZero) {
  const std::vector<ResolvedRun> runs = Expand(
      "grid:\n  optimizer.lr: [-0.0, 0.0, 0]\n  mean:\n    neg: {data.mean: [-0.0]}\n    pos: {data.mean: "
      "[0.0]}\n");
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(Hashes(runs).size(), 1u) << runs[0].canonical_yaml;
  EXPECT_NE(runs[0].canonical_yaml.find("  lr: 0\n"), std::string::npos)
      << runs[0].canonical_yaml;  // Not -0.
}

TEST(SweepCanonicalTest, ChoicesSpelledTwoWaysAreOneRun) {
  const std::vector<ResolvedRun> runs =
      Expand("random:\n  optimizer.lr: {choices: [0.10, 1e-1]}\nnum_samples: 8\nseed: 3\n");
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(Hashes(runs).size(), 1u);
}

TEST(SweepCanonicalTest, LogUniformWithEqualBoundsDrawsThatValue) {
  const std::vector<ResolvedRun> runs =
      Expand("random:\n  optimizer.lr: {min: 0.001, max: 0.001, log: true}\nnum_samples: 4\nseed: 1\n");
  ASSERT_EQ(runs.size(), 4u);
  for (const ResolvedRun& r : runs) {
    EXPECT_EQ(r.labels[0].second, "0.001");
    EXPECT_EQ(r.config.optimizer.lr, 0.001);
  }
}

TEST(SweepCanonicalTest, LogUniformDrawsStayWithinTheirBounds) {
  for (const char* bounds : {"{min: 0.001, max: 0.002, log: true}", "{min: 1e-7, max: 3e-7, log: true}",
                             "{min: 0.3, max: 0.7, log: true}"}) {
    absl::StatusOr<v1::SweepSpec> sweep = ParseSweepYaml(
        std::string(kBase) + "random:\n  optimizer.lr: " + bounds + "\nnum_samples: 400\nseed: 5\n",
        "s.yaml");
    ASSERT_TRUE(sweep.ok()) << sweep.status();
    const v1::RandomAxis& axis = sweep->random(0);
    for (const RunPoint& p : SweepRunPoints(*sweep)) {
      double v = 0;
      ASSERT_TRUE(absl::SimpleAtod(p.labels[0].second, &v));
      EXPECT_GE(v, axis.min()) << bounds;
      EXPECT_LE(v, axis.max()) << bounds;
    }
  }
}

}  // namespace
}  // namespace nmsparse
