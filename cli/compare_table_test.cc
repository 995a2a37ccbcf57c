#include "cli/compare_table.h"

#include "gtest/gtest.h"
#include "report/compare_pivot_testing.h"

namespace nmsparse::cli {
namespace {

using report::BuildComparePivot;

using report::testing::RecipeByNmSweep;
using report::testing::RecipeRun;

TEST(CompareTableTest, RowsFirstAxisColumnsSecondAxis) {
  const std::vector<v1::Run> runs = {
      RecipeRun(1, "mdgf_exp", "1:8", v1::SUCCEEDED, 70.0), RecipeRun(2, "dense", "2:4", v1::SUCCEEDED, 80.0),
      RecipeRun(3, "dense", "2:4", v1::SUCCEEDED, 82.0),    RecipeRun(4, "srste", "2:4", v1::RUNNING, 0),
      RecipeRun(5, "srste", "1:8", v1::FAILED, 0),          RecipeRun(6, "srste", "1:8", v1::QUEUED, 0),
  };
  EXPECT_EQ(RenderComparePivot(BuildComparePivot(RecipeByNmSweep(), runs, "top1")).Render(),
            "recipe    2:4               1:8\n"
            "--------  ----------------  ------\n"
            "dense     81 \u00b1 1.414 (n=2)  -\n"
            "srste     running           queued\n"
            "mdgf_exp  -                 70\n");
}

TEST(CompareTableTest, OneAxisGivesOneColumn) {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  recipe->add_values()->set_label("dense");
  recipe->add_values()->set_label("srste");
  const std::vector<v1::Run> runs = {RecipeRun(1, "dense", "", v1::SUCCEEDED, 91.25),
                                     RecipeRun(2, "srste", "", v1::SUCCEEDED, 90.5)};
  EXPECT_EQ(RenderComparePivot(BuildComparePivot(spec, runs, "top1")).Render(),
            "recipe   top1\n"
            "------  -----\n"
            "dense   91.25\n"
            "srste    90.5\n");
}

// Runs with model.ema report ema_top1 too: a column beside top1, found by report::Counterparts.
TEST(CompareTableTest, EmaMetricInAColumnBesideTheMetric) {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  recipe->add_values()->set_label("dense");
  recipe->add_values()->set_label("srste");
  std::vector<v1::Run> runs = {RecipeRun(1, "dense", "", v1::SUCCEEDED, 91.25),
                               RecipeRun(2, "srste", "", v1::SUCCEEDED, 90.5)};
  EXPECT_TRUE(report::Counterparts(runs, "top1").empty());
  (*runs[0].mutable_final_metrics())["ema_top1"] = 92;
  (*runs[1].mutable_final_metrics())["ema_top1"] = 91.5;
  const std::vector<report::Counterpart> counterparts = report::Counterparts(runs, "top1");
  ASSERT_EQ(counterparts.size(), 1u);
  EXPECT_EQ(counterparts[0].metric, "ema_top1");
  EXPECT_TRUE(report::Counterparts(runs, "params").empty());
  EXPECT_EQ(report::DeployableLegend(counterparts), "");
  EXPECT_EQ(RenderComparePivot(BuildComparePivot(spec, runs, "top1"),
                               {{"ema", BuildComparePivot(spec, runs, "ema_top1")}})
                .Render(),
            "recipe   top1  ema_top1\n"
            "------  -----  --------\n"
            "dense   91.25        92\n"
            "srste    90.5      91.5\n");
}

// N:M runs report deploy_top1 (contract/metric_names.h): a column beside top1 and each EMA column, headed
// by which model it is, and a legend saying which top-1 is which.
TEST(CompareTableTest, DeployableTop1InAColumnBesideTheRawOne) {
  const std::vector<v1::Run> runs = [] {
    std::vector<v1::Run> r = {RecipeRun(1, "mdgf_exp", "1:8", v1::SUCCEEDED, 70.0),
                              RecipeRun(2, "srste", "2:4", v1::SUCCEEDED, 80.0)};
    (*r[0].mutable_final_metrics())["deploy_top1"] = 12.5;  // The decayed leak removed.
    (*r[1].mutable_final_metrics())["deploy_top1"] = 80.0;  // Hard-masked already.
    return r;
  }();
  const std::vector<report::Counterpart> counterparts = report::Counterparts(runs, "top1");
  ASSERT_EQ(counterparts.size(), 1u);
  EXPECT_EQ(counterparts[0].metric, "deploy_top1");
  EXPECT_NE(report::DeployableLegend(counterparts).find("hard-masked at its target N:M"), std::string::npos);
  const report::ComparePivot pivot = BuildComparePivot(RecipeByNmSweep(), runs, "top1");
  EXPECT_EQ(RenderComparePivot(
                pivot, {{counterparts[0].label, BuildComparePivot(RecipeByNmSweep(), runs, "deploy_top1")}})
                .Render(),
            "recipe    2:4  2:4 deployable  1:8  1:8 deployable\n"
            "--------  ---  --------------  ---  --------------\n"
            "dense       -               -    -               -\n"
            "srste      80              80    -               -\n"
            "mdgf_exp    -               -   70            12.5\n");
}

}  // namespace
}  // namespace nmsparse::cli
