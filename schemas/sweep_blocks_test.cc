// The early_stopping and search blocks of a sweep file: defaults, and refusals that name the key and value.
#include "schemas/sweep_blocks.h"

#include <string>

#include "gtest/gtest.h"
#include "schemas/sweep.h"
#include "schemas/sweep_size.h"

namespace nmsparse {
namespace {

constexpr char kBase[] = R"(base:
  name: s
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 9}
grid:
  sparsity.m_sparsity: [4, 8]
)";

constexpr char kRandomBase[] = R"(base:
  name: s
  model: {name: vit_nano_patch7_28}
  data: {dataset: synthetic, batch_size: 32}
  schedule: {epochs: 2}
random:
  optimizer.lr: {min: 1.0e-4, max: 1.0e-2, log: true}
  sparsity.sparsity_type: {choices: [DENSE, SRSTE]}
)";

absl::StatusOr<v1::SweepSpec> Parse(const std::string& text) { return ParseSweepYaml(text, "s.yaml"); }

std::string ErrorOf(const std::string& text) {
  auto sweep = Parse(text);
  EXPECT_FALSE(sweep.ok()) << text;
  return std::string(sweep.status().message());
}

TEST(SweepBlocksTest, EarlyStoppingDefaults) {
  auto sweep = Parse(std::string(kBase) + "early_stopping: {metric: top1}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  const v1::EarlyStopping& es = sweep->early_stopping();
  EXPECT_EQ(es.policy(), "asha");
  EXPECT_EQ(es.mode(), "max");
  EXPECT_EQ(es.resource(), "epoch");
  EXPECT_EQ(es.min_resource(), 1u);
  EXPECT_EQ(es.reduction_factor(), 3u);
  EXPECT_EQ(es.max_resource(), 9u);  // The base's epochs.
}

TEST(SweepBlocksTest, EarlyStoppingRefusalsNameTheKey) {
  const std::string base(kBase);
  EXPECT_EQ(
      ErrorOf(base + "early_stopping: {metric: top1, colour: red}\n").find("s.yaml:8: early_stopping.colour"),
      0u);
  EXPECT_NE(ErrorOf(base + "early_stopping: {mode: max}\n").find("early_stopping.metric: missing"),
            std::string::npos);
  EXPECT_NE(ErrorOf(base + "early_stopping: {metric: top1, reduction_factor: 1}\n")
                .find("early_stopping.reduction_factor: value 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(base + "early_stopping: {metric: top1, policy: hyperband}\n")
                .find("early_stopping.policy: value 'hyperband' is not one of asha"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(base + "early_stopping: {metric: top1, mode: up}\n").find("early_stopping.mode: value 'up'"),
      std::string::npos);
  EXPECT_NE(ErrorOf(base + "early_stopping: {metric: top1, min_resource: 9}\n")
                .find("early_stopping.max_resource: value 9 leaves no rung"),
            std::string::npos);
}

TEST(SweepBlocksTest, SearchDefaultsAndRunCountIsTheBudget) {
  auto sweep = Parse(std::string(kRandomBase) + "search: {metric: top1, budget: 7, seed: 3}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->search().algorithm(), "tpe");
  EXPECT_EQ(sweep->search().parallel(), 1u);
  EXPECT_EQ(sweep->search().seed(), 3u);
  EXPECT_EQ(SweepRunCount(*sweep), 7);
  EXPECT_FALSE(CheckSweepRunCount(*sweep, 6, "the flag").ok());
}

TEST(SweepBlocksTest, SearchRefusalsNameTheKey) {
  const std::string base(kRandomBase);
  EXPECT_NE(ErrorOf(base + "search: {metric: top1}\n").find("search.budget: missing"), std::string::npos);
  EXPECT_NE(ErrorOf(base + "search: {metric: top1, budget: 0}\n").find("search.budget: value 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(base + "search: {metric: top1, budget: 4, algorithm: gp}\n")
                .find("search.algorithm: value 'gp' is not one of tpe"),
            std::string::npos);
  EXPECT_NE(ErrorOf(base + "search: {metric: top1, budget: 4, gamma: 1.5}\n").find("search.gamma: value 1.5"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(base + "num_samples: 3\nsearch: {metric: top1, budget: 4}\n").find("num_samples: value 3"),
      std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "search: {metric: top1, budget: 4}\n")
                .find("search: a search needs random"),
            std::string::npos);
}

TEST(SweepBlocksTest, KeyTablesHoldTheBlocks) {
  EXPECT_NE(std::find(SweepKeys().begin(), SweepKeys().end(), "early_stopping"), SweepKeys().end());
  EXPECT_NE(std::find(SweepKeys().begin(), SweepKeys().end(), "search"), SweepKeys().end());
  EXPECT_EQ(EarlyStoppingKeys().size(), 7u);
  EXPECT_EQ(SearchKeys().size(), 9u);
}

}  // namespace
}  // namespace nmsparse
