#include "schemas/sweep_size.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "schemas/sweep.h"

namespace nmsparse {
namespace {

constexpr char kBase[] = R"(name: s
base:
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 4}
  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}
)";

// A sweep with `axes` grid axes of `values` values each (on the wire: no parsing or validation needed).
v1::SweepSpec Grid(int axes, int values) {
  v1::SweepSpec sweep;
  for (int a = 0; a < axes; ++a) {
    v1::GridAxis* axis = sweep.add_grid();
    axis->set_name("axis" + std::to_string(a));
    for (int v = 0; v < values; ++v) axis->add_values()->set_label(std::to_string(v));
  }
  return sweep;
}

v1::SweepSpec Parse(const std::string& text) {
  auto sweep = ParseSweepYaml(text, "sweep.yaml");
  EXPECT_TRUE(sweep.ok()) << sweep.status();
  return sweep.ok() ? *sweep : v1::SweepSpec();
}

TEST(SweepRunCountTest, NoAxesIsOneRun) { EXPECT_EQ(SweepRunCount(v1::SweepSpec()), 1); }

TEST(SweepRunCountTest, GridIsTheProductOfAxisSizes) {
  v1::SweepSpec sweep = Grid(2, 3);
  sweep.mutable_grid(1)->add_values()->set_label("extra");
  EXPECT_EQ(SweepRunCount(sweep), 3 * 4);
  EXPECT_EQ(SweepRunCount(Grid(7, 10)), 10'000'000);
}

TEST(SweepRunCountTest, RandomDrawsNumSamplesAndAtLeastOne) {
  v1::SweepSpec sweep;
  sweep.add_random()->set_key("optimizer.lr");
  EXPECT_EQ(SweepRunCount(sweep), 1);  // num_samples 0 means 1.
  sweep.set_num_samples(5);
  EXPECT_EQ(SweepRunCount(sweep), 5);
}

TEST(SweepRunCountTest, NumSamplesWithoutRandomAxesDrawsNothing) {
  v1::SweepSpec sweep = Grid(1, 3);
  sweep.set_num_samples(5);
  EXPECT_EQ(SweepRunCount(sweep), 3);
}

TEST(SweepRunCountTest, MixedIsGridTimesSamples) {
  v1::SweepSpec sweep = Grid(2, 3);
  sweep.add_random()->set_key("optimizer.lr");
  sweep.set_num_samples(4);
  EXPECT_EQ(SweepRunCount(sweep), 3 * 3 * 4);
}

TEST(SweepRunCountTest, AnEmptyAxisIsZeroRuns) {
  v1::SweepSpec sweep = Grid(3, 10);
  sweep.add_grid()->set_name("empty");
  EXPECT_EQ(SweepRunCount(sweep), 0);
}

TEST(SweepRunCountTest, SaturatesInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SweepRunCount(Grid(18, 10)), 1'000'000'000'000'000'000);
  EXPECT_EQ(SweepRunCount(Grid(19, 10)), kMax);
  EXPECT_EQ(SweepRunCount(Grid(30, 10)), kMax);
  v1::SweepSpec sweep = Grid(30, 10);
  sweep.add_random()->set_key("optimizer.lr");
  sweep.set_num_samples(1000);
  EXPECT_EQ(SweepRunCount(sweep), kMax);
  sweep.add_grid()->set_name("empty");  // Zero stays zero after saturation.
  EXPECT_EQ(SweepRunCount(sweep), 0);
}

TEST(SweepRunCountTest, MatchesWhatExpandSweepMakes) {
  const v1::SweepSpec sweep = Parse(std::string(kBase) + R"(grid:
  recipe:
    dense: {sparsity.sparsity_type: DENSE}
    srste: {sparsity.sparsity_type: SRSTE}
  sparsity.m_sparsity: [4, 8, 16]
random:
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
num_samples: 3
)");
  auto runs = ExpandSweep(sweep);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(SweepRunCount(sweep), static_cast<int64_t>(runs->size()));
  EXPECT_EQ(SweepRunCount(sweep), 18);
}

TEST(CheckSweepRunCountTest, AtTheLimitIsAccepted) {
  EXPECT_TRUE(CheckSweepRunCount(Grid(5, 10), 100'000, "flag").ok());
}

TEST(CheckSweepRunCountTest, PastTheLimitNamesCountLimitAndFlag) {
  absl::Status status = CheckSweepRunCount(Grid(7, 10), 100'000, "nmserver --max_runs_per_sweep");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "the sweep expands to 10,000,000 runs, more than the limit of 100,000 (nmserver "
            "--max_runs_per_sweep)");
}

TEST(CheckSweepRunCountTest, ASaturatedCountSaysAtLeast) {
  absl::Status status = CheckSweepRunCount(Grid(30, 10), 100'000, "flag");
  EXPECT_EQ(status.message(),
            "the sweep expands to at least 9,223,372,036,854,775,807 runs, more than the limit of 100,000 "
            "(flag)");
}

}  // namespace
}  // namespace nmsparse
