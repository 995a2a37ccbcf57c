#include "report/compare_pivot.h"

#include <limits>

#include "gtest/gtest.h"
#include "report/compare_pivot_testing.h"

namespace nmsparse::report {
namespace {

using testing::RecipeByNmSweep;
using testing::RecipeRun;

TEST(ComparePivotTest, RowsFirstAxisColumnsSecondAxisInSpecOrder) {
  const std::vector<v1::Run> runs = {
      RecipeRun(1, "mdgf_exp", "1:8", v1::SUCCEEDED, 70.0), RecipeRun(2, "dense", "2:4", v1::SUCCEEDED, 80.0),
      RecipeRun(3, "dense", "2:4", v1::SUCCEEDED, 82.0),    RecipeRun(4, "srste", "2:4", v1::RUNNING, 0),
      RecipeRun(5, "srste", "1:8", v1::FAILED, 0),          RecipeRun(6, "srste", "1:8", v1::QUEUED, 0),
  };
  const ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top1");
  EXPECT_EQ(pivot.row_labels, (std::vector<std::string>{"dense", "srste", "mdgf_exp"}));
  EXPECT_EQ(pivot.column_labels, (std::vector<std::string>{"2:4", "1:8"}));
  EXPECT_DOUBLE_EQ(pivot.cells[0][0].mean(), 81.0);
  std::vector<std::vector<std::string>> texts;
  for (const auto& row : pivot.cells) {
    texts.emplace_back();
    for (const ComparePivot::Cell& cell : row) texts.back().push_back(CellText(pivot, cell));
  }
  EXPECT_EQ(texts, (std::vector<std::vector<std::string>>{
                       {"81 \u00b1 1.414 (n=2)", "-"}, {"running", "queued"}, {"-", "70"}}));
}

// issue 14: cells that average runs differing in a random axis or seed show their spread; the JSON form keeps
// row and column order as arrays.
TEST(ComparePivotTest, SpreadAndOrderedJson) {
  const std::vector<v1::Run> runs = {
      RecipeRun(1, "dense", "2:4", v1::SUCCEEDED, 80.0), RecipeRun(2, "dense", "2:4", v1::SUCCEEDED, 82.0),
      RecipeRun(3, "dense", "2:4", v1::SUCCEEDED, 84.0), RecipeRun(4, "srste", "1:8", v1::RUNNING, 0)};
  const ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top1");
  const ComparePivot::Cell& cell = pivot.cells[0][0];
  EXPECT_DOUBLE_EQ(cell.mean(), 82.0);
  EXPECT_DOUBLE_EQ(cell.stddev(), 2.0);  // Sample std of 80, 82, 84.
  EXPECT_EQ(CellText(pivot, cell), "82 \u00b1 2 (n=3)");
  const Json json = ComparePivotToJson(7, pivot);
  EXPECT_EQ(json["columns"], Json({"2:4", "1:8"}));
  ASSERT_EQ(json["rows"].size(), 3u);
  EXPECT_EQ(json["rows"][0]["label"], "dense");
  EXPECT_EQ(json["rows"][2]["label"], "mdgf_exp");
  const Json& first = json["rows"][0]["cells"][0];
  EXPECT_EQ(first["column"], "2:4");
  EXPECT_EQ(first["n"], 3);
  EXPECT_DOUBLE_EQ(first["mean"].get<double>(), 82.0);
  EXPECT_DOUBLE_EQ(first["std"].get<double>(), 2.0);
  const Json& running = json["rows"][1]["cells"][1];
  EXPECT_TRUE(running["mean"].is_null());
  EXPECT_EQ(running["state"], "running");
  // Keys in a fixed order, not a map's.
  EXPECT_EQ(json.begin().key(), "sweep_id");
  EXPECT_EQ(json["sweep_id"], 7);
}

// Issue 27: a run that ASHA marked stopped_early after it had finished training, final metrics and all, is a
// value of its cell, not "stopped_early"; one stopped at a rung (no final metrics) still shows the state.
TEST(ComparePivotTest, StoppedEarlyRunWithFinalMetricsCounts) {
  v1::Run finished = RecipeRun(1, "dense", "2:4", v1::STOPPED_EARLY, 0);
  (*finished.mutable_final_metrics())["top1"] = 75.0;
  const std::vector<v1::Run> runs = {finished, RecipeRun(2, "srste", "2:4", v1::STOPPED_EARLY, 0)};
  const ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top1");
  EXPECT_EQ(CellText(pivot, pivot.cells[0][0]), "75");
  EXPECT_EQ(CellText(pivot, pivot.cells[1][0]), "stopped_early");
}

TEST(ComparePivotTest, OneAxisGivesOneColumn) {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  recipe->add_values()->set_label("dense");
  recipe->add_values()->set_label("srste");
  const std::vector<v1::Run> runs = {RecipeRun(1, "dense", "", v1::SUCCEEDED, 91.25),
                                     RecipeRun(2, "srste", "", v1::SUCCEEDED, 90.5)};
  const ComparePivot pivot = BuildComparePivot(spec, runs, "top1");
  EXPECT_EQ(pivot.row_labels, (std::vector<std::string>{"dense", "srste"}));
  EXPECT_EQ(pivot.column_labels, (std::vector<std::string>{"top1"}));
  EXPECT_EQ(CellText(pivot, pivot.cells[0][0]), "91.25");
  EXPECT_EQ(CellText(pivot, pivot.cells[1][0]), "90.5");
}

TEST(ComparePivotTest, NoAxisListsRuns) {
  const std::vector<v1::Run> runs = {RecipeRun(4, "x", "", v1::SUCCEEDED, 50.0)};
  const ComparePivot pivot = BuildComparePivot(v1::SweepSpec(), runs, "top1");
  ASSERT_EQ(pivot.row_labels.size(), 1u);
  EXPECT_EQ(pivot.row_labels[0], "run 4 recipe=x");
}

TEST(ComparePivotTest, SucceededWithoutTheMetric) {
  const std::vector<v1::Run> runs = {RecipeRun(1, "dense", "2:4", v1::SUCCEEDED, 1.0)};
  const ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top5");
  EXPECT_EQ(CellText(pivot, pivot.cells[0][0]), "no top5");
}

// A NaN final metric (stored before the gateway refused them) is no value: the cell's mean is of the finite
// ones, not NaN.
TEST(ComparePivotTest, ANonFiniteValueIsNoValue) {
  const std::vector<v1::Run> runs = {
      RecipeRun(1, "srste", "2:4", v1::SUCCEEDED, 0.5),
      RecipeRun(2, "srste", "2:4", v1::SUCCEEDED, std::numeric_limits<double>::quiet_NaN())};
  const ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top1");
  ASSERT_EQ(pivot.row_labels[1], "srste");
  ASSERT_EQ(pivot.cells[1][0].values.size(), 1u);
  EXPECT_EQ(pivot.cells[1][0].mean(), 0.5);
}

}  // namespace
}  // namespace nmsparse::report
