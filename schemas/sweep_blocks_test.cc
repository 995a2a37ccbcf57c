// The early_stopping and search blocks of a sweep file: defaults, and refusals that name the key and value.
#include "schemas/sweep_blocks.h"

#include <limits>
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

// max_resource defaults to the epochs the base trains, cooldown included, as the trainer counts them (issue
// 24); a stored sweep without it reads the same.
TEST(SweepBlocksTest, EarlyStoppingMaxResourceDefaultsToTheTrainedEpochs) {
  std::string base(kBase);
  base.replace(base.find("{epochs: 9}"), 11, "{epochs: 9, sched: cosine, cooldown_epochs: 3}");
  auto sweep = Parse(base + "early_stopping: {metric: top1}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->early_stopping().max_resource(), 12u);
  sweep->mutable_early_stopping()->set_max_resource(0);
  EXPECT_EQ(AshaMaxResource(*sweep), 12u);
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

// Without `mode`, a block ranks by its metric's declared direction (contract/metric_direction.h): a loss is
// minimized, not silently maximized; a metric without a direction needs `mode`, in the file and on the wire.
TEST(SweepBlocksTest, ModeDefaultsToTheMetricsDeclaredDirection) {
  const std::string base(kBase);
  auto loss = Parse(base + "early_stopping: {metric: eval_loss}\n");
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ(loss->early_stopping().mode(), "min");
  auto search = Parse(std::string(kRandomBase) + "search: {metric: loss, budget: 4}\n");
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ(search->search().mode(), "min");
  EXPECT_EQ(ErrorOf(base + "early_stopping: {metric: acc}\n")
                .find("s.yaml:8: early_stopping.metric: metric 'acc' has no declared direction"),
            0u);
  EXPECT_NE(ErrorOf(std::string(kRandomBase) + "search: {metric: acc, budget: 4}\n")
                .find("say search.mode: max or min"),
            std::string::npos);
  auto explicit_mode = Parse(base + "early_stopping: {metric: acc, mode: max}\n");
  ASSERT_TRUE(explicit_mode.ok()) << explicit_mode.status();

  v1::SweepSpec wire = *loss;
  wire.mutable_early_stopping()->clear_mode();
  ASSERT_TRUE(FillObjectiveModes(&wire).ok());
  EXPECT_EQ(wire.early_stopping().mode(), "min");
  wire.mutable_early_stopping()->clear_mode();
  wire.mutable_early_stopping()->set_metric("acc");
  EXPECT_NE(FillObjectiveModes(&wire).message().find("early_stopping.metric: metric 'acc'"),
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

// Issue 22: n_candidates 4e9 passed validate and froze the coordinator. Each search setting has a bound, in
// the file (with its line) and on the wire alike.
TEST(SweepBlocksTest, SearchSettingsAreBounded) {
  const std::string base(kRandomBase);
  EXPECT_EQ(ErrorOf(base + "search: {algorithm: tpe, metric: top1, budget: 4, n_startup: 1, n_candidates: "
                           "4000000000}\n"),
            "s.yaml:9: search.n_candidates: value 4000000000 is out of range: must be in [1, 1000]");
  EXPECT_EQ(ErrorOf(base + "search: {metric: top1, budget: 20000}\n"),
            "s.yaml:9: search.budget: value 20000 is out of range: must be in [1, 10000]");
  EXPECT_EQ(ErrorOf(base + "search: {metric: top1, budget: 4, parallel: 1001}\n"),
            "s.yaml:9: search.parallel: value 1001 is out of range: must be in [1, 1000]");
  EXPECT_EQ(ErrorOf(base + "search: {metric: top1, budget: 4, n_startup: 5000}\n"),
            "s.yaml:9: search.n_startup: value 5000 is out of range: must be in [1, 1000]");
  EXPECT_TRUE(Parse(base + "search: {metric: top1, budget: 10000, parallel: 1000, n_startup: 1000, "
                           "n_candidates: 1000}\n")
                  .ok());

  v1::SweepSpec wire = *Parse(base + "search: {metric: top1, budget: 4}\n");
  wire.mutable_search()->set_n_candidates(4000000000u);
  EXPECT_EQ(CheckSearch(wire).message(),
            "search.n_candidates: value 4000000000 is out of range: must be <= 1000");
  wire.mutable_search()->set_n_candidates(0);  // The default, 24.
  wire.mutable_search()->set_budget(10001);
  EXPECT_EQ(CheckSearch(wire).message(), "search.budget: value 10001 is out of range: must be in [1, 10000]");
  wire.mutable_search()->set_budget(4);
  ASSERT_TRUE(CheckSearch(wire).ok());
  for (int i = 0; i < 40; ++i) *wire.add_random() = wire.random(0);
  EXPECT_EQ(CheckSearch(wire).message(), "random: 42 axes, more than the limit of 32 for a search");
  wire.mutable_random()->DeleteSubrange(2, 40);
  for (int i = 0; i < 1000; ++i) wire.mutable_random(1)->add_choices("DENSE");
  EXPECT_EQ(
      CheckSearch(wire).message(),
      "random.sparsity.sparsity_type.choices: 1,002 choices, more than the limit of 1,000 for a search");
}

// nmctl and nmserver refuse a random axis's range with the same check (CheckRandomAxis).
TEST(SweepBlocksTest, RandomAxisRangesAreCheckedOnTheWireAsInTheFile) {
  const std::string head = "base:\n  model: {name: vit_nano_patch7_28}\nrandom:\n  optimizer.lr:\n";
  EXPECT_EQ(ErrorOf(head + "    min: 2\n    max: 1\n"),
            "s.yaml:6: random.optimizer.lr.max: value 1 is out of range: must be >= 2");
  EXPECT_EQ(ErrorOf(head + "    min: 0\n    max: 1\n    log: true\n"),
            "s.yaml:5: random.optimizer.lr.min: value 0 is out of range: log needs min > 0");
  EXPECT_EQ(ErrorOf(head + "    {min: 1.2, max: 1.7, integer: true}\n"),
            "s.yaml:5: random.optimizer.lr.max: value 1.7 leaves no integer: an integer axis needs one in "
            "[min, max] (min 1.2)");

  v1::SweepSpec wire = *Parse(std::string(kRandomBase));
  ASSERT_TRUE(CheckRandomAxes(wire).ok());
  wire.mutable_random(0)->set_min(5);
  wire.mutable_random(0)->set_max(1);
  EXPECT_EQ(CheckRandomAxes(wire).message(),
            "random.optimizer.lr.max: value 1 is out of range: must be >= 5");
  wire.mutable_random(0)->set_max(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(CheckRandomAxes(wire).message(), "random.optimizer.lr.max: value nan is not a finite number");
  wire.mutable_random(0)->set_max(10);
  wire.mutable_random(0)->set_min(-1);
  EXPECT_EQ(CheckRandomAxes(wire).message(),
            "random.optimizer.lr.min: value -1 is out of range: log needs min > 0");
}

TEST(SweepBlocksTest, KeyTablesHoldTheBlocks) {
  EXPECT_NE(std::find(SweepKeys().begin(), SweepKeys().end(), "early_stopping"), SweepKeys().end());
  EXPECT_NE(std::find(SweepKeys().begin(), SweepKeys().end(), "search"), SweepKeys().end());
  EXPECT_EQ(EarlyStoppingKeys().size(), 8u);  // min_peers included.
  EXPECT_EQ(SearchKeys().size(), 9u);
}

}  // namespace
}  // namespace nmsparse
