// The torch-free parts: the sparse-then-dense switch, the dense vs 2:4 decision cache and its timing.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/sparsity/semi_structured/dense_switch.h"
#include "worker/sparsity/semi_structured/gemm_decision_cache.h"
#include "worker/sparsity/semi_structured/interleaved_timing.h"

namespace nmsparse {
namespace {

PhaseSchedule Phases(const std::vector<PhaseSpec>& list, int epochs) {
  SparsityConfig sparsity;
  sparsity.sparsity_type = SparsityType::kSrste;
  sparsity.phases = list;
  auto schedule = PhaseSchedule::Create(sparsity, epochs);
  EXPECT_TRUE(schedule.ok()) << schedule.status();
  return *schedule;
}

TEST(DenseSwitchTest, FractionOfSteps) {
  SemiStructuredConfig config;
  config.dense_after_fraction = 0.7;
  auto sw = DenseSwitch::Create(config, Phases({}, 10), /*steps_per_epoch=*/10);
  ASSERT_TRUE(sw.ok());
  EXPECT_EQ(sw->first_dense_step(), 70);  // 0.7 * 100 is 69.99.. in binary: still step 70.
  EXPECT_FALSE(sw->DenseAt(69));
  EXPECT_TRUE(sw->DenseAt(70));
  config.dense_after_fraction = 1.0;
  auto never = DenseSwitch::Create(config, Phases({}, 10), 10);
  ASSERT_TRUE(never.ok());
  EXPECT_FALSE(never->DenseAt(99));  // The last step of the run.
}

TEST(DenseSwitchTest, FromAPhase) {
  SemiStructuredConfig config;
  config.dense_after_phase = 1;
  const PhaseSchedule phases = Phases({{PhaseKind::kSparse, 0.75}, {PhaseKind::kDense, 0.25}}, 8);
  auto sw = DenseSwitch::Create(config, phases, /*steps_per_epoch=*/5);
  ASSERT_TRUE(sw.ok());
  EXPECT_EQ(sw->first_dense_step(), 6 * 5);  // Phase 1 begins at epoch floor(8 * 0.75).
  config.dense_after_phase = 2;
  auto bad = DenseSwitch::Create(config, phases, 5);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("semi_structured.dense_after.phase"), std::string::npos);
}

TEST(GemmDecisionTest, MarginRule) {
  const GemmTiming faster{/*dense_ms=*/0.577, /*sparse_ms=*/0.451};  // 1.28x.
  const GemmTiming barely{/*dense_ms=*/0.293, /*sparse_ms=*/0.288};  // 1.02x.
  EXPECT_TRUE(DecideGemm(Accelerate::kAuto, faster, 0.05).sparse);
  EXPECT_FALSE(DecideGemm(Accelerate::kAuto, barely, 0.05).sparse);
  EXPECT_TRUE(DecideGemm(Accelerate::kAuto, barely, 0.0).sparse);
  EXPECT_NEAR(DecideGemm(Accelerate::kAuto, faster, 0.05).speedup, 0.577 / 0.451, 1e-12);
  EXPECT_TRUE(DecideGemm(Accelerate::kForce, barely, 0.5).sparse);
  EXPECT_TRUE(DecideGemm(Accelerate::kForce, std::nullopt, 0.05).sparse);
  EXPECT_FALSE(DecideGemm(Accelerate::kOff, faster, 0.05).sparse);
  EXPECT_FALSE(DecideGemm(Accelerate::kAuto, std::nullopt, 0.05).sparse);
}

// A GPU whose clocks ramp up over its first calls (3x slower at first), running dense at 1.0 ms and 2:4 at
// 0.8 ms per call once warm. One dense sample first, then one 2:4 sample, would call 2:4 2.4x faster.
class RampingGpu {
 public:
  double Block(TimedSide side) {
    sides.push_back(side);
    const double warm = side == TimedSide::kDense ? 1.0 : 0.8;
    const double slowdown = std::max(1.0, 3.0 - 0.5 * static_cast<double>(calls_++));
    return warm * slowdown;
  }
  std::vector<TimedSide> sides;

 private:
  int calls_ = 0;
};

TEST(InterleavedTimingTest, WarmedInterleavedMedians) {
  RampingGpu gpu;
  const GemmTiming t = TimeInterleaved([&](TimedSide side) { return gpu.Block(side); });
  EXPECT_DOUBLE_EQ(t.dense_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.sparse_ms, 0.8);
  // 2 warm-up pairs, then 7 timed rounds; the side that goes first alternates.
  ASSERT_EQ(gpu.sides.size(), 2u * 2u + 7u * 2u);
  for (size_t round = 0; round < 9; ++round) {
    EXPECT_NE(gpu.sides[2 * round], gpu.sides[2 * round + 1]) << round;
    if (round > 0) {
      EXPECT_NE(gpu.sides[2 * round], gpu.sides[2 * round - 2]) << round;
    }
  }
  EXPECT_FALSE(DecideGemm(Accelerate::kAuto, t, 0.3).sparse);  // 1.25x: not 1.3x.
  EXPECT_TRUE(DecideGemm(Accelerate::kAuto, t, 0.2).sparse);
}

TEST(InterleavedTimingTest, OneDisturbedBlockDoesNotDecide) {
  int call = 0;
  const GemmTiming t = TimeInterleaved([&](TimedSide side) {
    ++call;
    if (call == 6) return 50.0;  // Another process's burst during one timed block.
    return side == TimedSide::kDense ? 1.0 : 1.1;
  });
  EXPECT_DOUBLE_EQ(t.dense_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.sparse_ms, 1.1);
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(GemmDecisionCacheTest, PersistsPerGpuAndShape) {
  const std::string path = TempPath("cache_dir/timings.tsv");
  std::remove(path.c_str());
  auto empty = GemmDecisionCache::Load(path);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->size(), 0u);
  const GemmKey h100{"NVIDIA H100 80GB HBM3", "bf16", "weight", 50432, 1024, 4096};
  GemmKey a100 = h100;
  a100.gpu = "NVIDIA A100-SXM4-80GB";
  GemmKey other_shape = h100;
  other_shape.m = 25216;
  empty->Put(h100, {0.577, 0.451});
  empty->Put(a100, {0.9, 0.7});
  ASSERT_TRUE(empty->Save().ok());

  auto loaded = GemmDecisionCache::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->size(), 2u);
  ASSERT_TRUE(loaded->Find(h100).has_value());
  EXPECT_NEAR(loaded->Find(h100)->dense_ms, 0.577, 1e-9);
  EXPECT_NEAR(loaded->Find(a100)->sparse_ms, 0.7, 1e-9);
  EXPECT_FALSE(loaded->Find(other_shape).has_value());
}

TEST(GemmDecisionCacheTest, MalformedLineNamesFileAndLine) {
  const std::string path = TempPath("bad_timings.tsv");
  std::ofstream(path) << "# header\nH100\tbf16\tweight\t1\t2\t3\t0.5\n";
  auto loaded = GemmDecisionCache::Load(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find(path + ":2:"), std::string::npos) << loaded.status();
}

TEST(GemmDecisionCacheTest, DefaultPath) {
  EXPECT_EQ(GemmDecisionCache::DefaultPath("/x/t.tsv"), "/x/t.tsv");
  setenv("NMSPARSE_CACHE_DIR", "/cache", 1);
  EXPECT_EQ(GemmDecisionCache::DefaultPath(""), "/cache/semi_structured_timings.tsv");
  unsetenv("NMSPARSE_CACHE_DIR");
}

}  // namespace
}  // namespace nmsparse
