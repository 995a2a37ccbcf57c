#include "cli/compare_table.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "report/compare_pivot.h"
#include "report/compare_pivot_testing.h"

namespace nmsparse::cli {
namespace {

using report::BuildComparePivot;
using report::BuildPaperTable;
using report::ComparePivot;
using report::PaperTable;
using report::PaperTableOptions;

// recipe (dense, srste, mdgf_exp) x sparsity.m_sparsity (8, 16) x seed (0, 1, 2), N = 1: the paper's layout.
v1::SweepSpec PaperSweep() {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  for (const char* label : {"dense", "srste", "mdgf_exp"}) recipe->add_values()->set_label(label);
  v1::GridAxis* m = spec.add_grid();
  m->set_name("sparsity.m_sparsity");
  for (const char* label : {"8", "16"}) {
    v1::AxisValue* v = m->add_values();
    v->set_label(label);
    (*v->mutable_set())["sparsity.m_sparsity"] = label;
  }
  v1::GridAxis* seed = spec.add_grid();
  seed->set_name("seed");
  for (const char* label : {"0", "1", "2"}) {
    v1::AxisValue* v = seed->add_values();
    v->set_label(label);
    (*v->mutable_set())["seed"] = label;
  }
  return spec;
}

v1::Run PaperRun(int64_t id, const std::string& recipe, int m, int seed, v1::RunState state, double top1) {
  v1::Run run = report::testing::RecipeRun(id, recipe, "", state, top1);
  (*run.mutable_labels())["sparsity.m_sparsity"] = std::to_string(m);
  (*run.mutable_labels())["seed"] = std::to_string(seed);
  run.set_resolved_spec(absl::StrCat("sparsity: {sparsity_type: ", recipe == "dense" ? "DENSE" : "SRSTE",
                                     ", n_sparsity: 1, m_sparsity: ", m, "}\n"));
  return run;
}

// Top-1 as the trainer reports it (a fraction); dense is one model whatever M says, so both columns hold the
// same values.
std::vector<v1::Run> PaperRuns() {
  std::vector<v1::Run> runs;
  const double dense[] = {0.80, 0.82, 0.81}, srste8[] = {0.78, 0.79, 0.80}, srste16[] = {0.75, 0.77, 0.76},
               mdgf8[] = {0.79, 0.80, 0.81};
  int64_t id = 1;
  for (int seed = 0; seed < 3; ++seed) {
    for (int m : {8, 16}) runs.push_back(PaperRun(id++, "dense", m, seed, v1::SUCCEEDED, dense[seed]));
    runs.push_back(PaperRun(id++, "srste", 8, seed, v1::SUCCEEDED, srste8[seed]));
    runs.push_back(PaperRun(id++, "srste", 16, seed, v1::SUCCEEDED, srste16[seed]));
    runs.push_back(PaperRun(id++, "mdgf_exp", 8, seed, v1::SUCCEEDED, mdgf8[seed]));
  }
  runs.push_back(PaperRun(id++, "mdgf_exp", 16, 0, v1::RUNNING, 0));
  return runs;
}

PaperTable Table(const std::string& delta_row = "") {
  const ComparePivot pivot = BuildComparePivot(PaperSweep(), PaperRuns(), "top1");
  PaperTableOptions options;
  options.delta_row = delta_row;
  absl::StatusOr<PaperTable> table = BuildPaperTable(pivot, options);
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? *table : PaperTable{};
}

constexpr char kTitle[] = "sweep 7 paper: final top1 (%) by recipe x N:M, pooled over seed";

// Percent with one decimal, mean ± sample std (n), N:M headers from an m_sparsity axis, seeds pooled, and
// the paired difference against dense per seed: srste at 1:8 is 78-80, 79-82, 80-81 = -2 ± 1.
TEST(CompareTableTest, TextInPercentWithNmHeadersAndPairedDelta) {
  EXPECT_EQ(
      RenderPaperTable(Table("dense"), kTitle, TableFormat::kText),
      "sweep 7 paper: final top1 (%) by recipe x N:M, pooled over seed\n"
      "recipe    1:8               1:8 \u0394 vs dense    1:16              1:16 \u0394 vs dense\n"
      "--------  ----------------  ----------------  ----------------  ----------------\n"
      "dense     81.0 \u00b1 1.0 (n=3)  -                 81.0 \u00b1 1.0 (n=3)  -\n"
      "srste     79.0 \u00b1 1.0 (n=3)  -2.0 \u00b1 1.0 (n=3)  76.0 \u00b1 1.0 (n=3)  -5.0 \u00b1 0.0 (n=3)\n"
      "mdgf_exp  80.0 \u00b1 1.0 (n=3)  -1.0 \u00b1 1.0 (n=3)  running           -\n");
}

// Δ against a named recipe: mdgf_exp is 1 point above srste at each seed.
TEST(CompareTableTest, MarkdownWithDeltaVsARecipe) {
  EXPECT_EQ(RenderPaperTable(Table("srste"), kTitle, TableFormat::kMarkdown),
            "sweep 7 paper: final top1 (%) by recipe x N:M, pooled over seed\n\n"
            "| recipe | 1:8 | 1:8 \u0394 vs srste | 1:16 | 1:16 \u0394 vs srste |\n"
            "| --- | ---: | ---: | ---: | ---: |\n"
            "| dense | 81.0 \u00b1 1.0 (n=3) | +2.0 \u00b1 1.0 (n=3) | 81.0 \u00b1 1.0 (n=3) | +5.0 \u00b1 "
            "0.0 (n=3) |\n"
            "| srste | 79.0 \u00b1 1.0 (n=3) | - | 76.0 \u00b1 1.0 (n=3) | - |\n"
            "| mdgf\\_exp | 80.0 \u00b1 1.0 (n=3) | +1.0 \u00b1 0.0 (n=3) | running | - |\n");
}

TEST(CompareTableTest, Latex) {
  EXPECT_EQ(RenderPaperTable(Table(), kTitle, TableFormat::kLatex),
            "% sweep 7 paper: final top1 (\\%) by recipe x N:M, pooled over seed\n"
            "\\begin{tabular}{lrr}\n"
            "\\toprule\n"
            "recipe & 1:8 & 1:16 \\\\\n"
            "\\midrule\n"
            "dense & 81.0 $\\pm$ 1.0 (n=3) & 81.0 $\\pm$ 1.0 (n=3) \\\\\n"
            "srste & 79.0 $\\pm$ 1.0 (n=3) & 76.0 $\\pm$ 1.0 (n=3) \\\\\n"
            "mdgf\\_exp & 80.0 $\\pm$ 1.0 (n=3) & running \\\\\n"
            "\\bottomrule\n"
            "\\end{tabular}\n");
}

// One line per cell, numbers unrounded (in percent), for plotting scripts.
TEST(CompareTableTest, Csv) {
  EXPECT_EQ(RenderPaperTable(Table("dense"), kTitle, TableFormat::kCsv),
            "recipe,column,quantity,unit,mean,std,n,state\n"
            "dense,1:8,top1,%,81,1,3,succeeded\n"
            "dense,1:8,top1 delta vs dense,%,,,0,\n"
            "dense,1:16,top1,%,81,1,3,succeeded\n"
            "dense,1:16,top1 delta vs dense,%,,,0,\n"
            "srste,1:8,top1,%,79,1,3,succeeded\n"
            "srste,1:8,top1 delta vs dense,%,-2,1,3,paired\n"
            "srste,1:16,top1,%,76,1,3,succeeded\n"
            "srste,1:16,top1 delta vs dense,%,-5,0,3,paired\n"
            "mdgf_exp,1:8,top1,%,80,1,3,succeeded\n"
            "mdgf_exp,1:8,top1 delta vs dense,%,-1,1,3,paired\n"
            "mdgf_exp,1:16,top1,%,,,0,running\n"
            "mdgf_exp,1:16,top1 delta vs dense,%,,,0,\n");
}

// User strings are data in every format: a label with markup, a formula, a pipe and a newline.
TEST(CompareTableTest, HostileLabelsAreEscapedInEachFormat) {
  v1::SweepSpec spec;
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("re|cipe_$");
  recipe->add_values()->set_label("=cmd|x\n*b* \\input{y} 50%");
  v1::Run run = report::testing::RecipeRun(1, "", "", v1::SUCCEEDED, 0.5);
  run.mutable_labels()->clear();
  (*run.mutable_labels())["re|cipe_$"] = "=cmd|x\n*b* \\input{y} 50%";
  absl::StatusOr<PaperTable> table = BuildPaperTable(BuildComparePivot(spec, {run}, "top1"));
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kMarkdown),
            "t\n\n| re\\|cipe\\_$ | top1 |\n| --- | ---: |\n"
            "| =cmd\\|x\\\\x0a\\*b\\* \\\\input{y} 50% | 50.0 |\n");
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kLatex),
            "% t\n\\begin{tabular}{lr}\n\\toprule\nre|cipe\\_\\$ & top1 \\\\\n\\midrule\n"
            "=cmd|x\\textbackslash{}x0a*b* \\textbackslash{}input\\{y\\} 50\\% & 50.0 \\\\\n"
            "\\bottomrule\n\\end{tabular}\n");
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kCsv),
            "re|cipe_$,column,quantity,unit,mean,std,n,state\n"
            "'=cmd|x\\x0a*b* \\input{y} 50%,,top1,%,50,,1,succeeded\n");
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kText),
            "t\nre|cipe_$                    top1\n---------------------------  ----\n"
            "=cmd|x\\x0a*b* \\input{y} 50%  50.0\n");
}

TEST(CompareTableTest, DeltaAgainstAMissingRowIsAnError) {
  const ComparePivot pivot = BuildComparePivot(PaperSweep(), PaperRuns(), "top1");
  PaperTableOptions options;
  options.delta_row = "rigl";
  EXPECT_EQ(BuildPaperTable(pivot, options).status().message(),
            "--delta rigl: not a row of the table (dense, srste, mdgf_exp)");
}

// Runs with model.ema report ema_top1, N:M runs deploy_top1 (contract/metric_names.h): each a column beside
// the metric's, headed by which model it is (report::Counterparts), in the same percent form.
TEST(CompareTableTest, EmaAndDeployableColumnsBesideTheMetric) {
  std::vector<v1::Run> runs = {report::testing::RecipeRun(1, "mdgf_exp", "1:8", v1::SUCCEEDED, 0.70),
                               report::testing::RecipeRun(2, "srste", "2:4", v1::SUCCEEDED, 0.80)};
  EXPECT_TRUE(report::Counterparts(runs, "top1").empty());
  (*runs[0].mutable_final_metrics())["ema_top1"] = 0.72;
  (*runs[1].mutable_final_metrics())["ema_top1"] = 0.81;
  (*runs[0].mutable_final_metrics())["deploy_top1"] = 0.125;  // The decayed leak removed.
  (*runs[1].mutable_final_metrics())["deploy_top1"] = 0.80;   // Hard-masked already.
  const std::vector<report::Counterpart> counterparts = report::Counterparts(runs, "top1");
  ASSERT_EQ(counterparts.size(), 2u);
  EXPECT_EQ(counterparts[0].metric, "ema_top1");
  EXPECT_EQ(counterparts[1].metric, "deploy_top1");
  EXPECT_TRUE(report::Counterparts(runs, "params").empty());
  EXPECT_NE(report::DeployableLegend("top1", counterparts).find("hard-masked at its target N:M"),
            std::string::npos);
  EXPECT_EQ(report::DeployableLegend("top1", {counterparts[0]}), "");
  EXPECT_NE(report::DeployableLegend("deploy_top1", {}), "");
  // The paper's table of top-1 is the deployable model's once a run reports it; other metrics stay.
  EXPECT_EQ(report::PaperTableMetric(runs, "top1"), "deploy_top1");
  EXPECT_EQ(report::PaperTableMetric(runs, "top5"), "top5");
  EXPECT_EQ(report::PaperTableMetric({runs[0]}, "ema_top1"), "ema_top1");
  const v1::SweepSpec spec = report::testing::RecipeByNmSweep();
  PaperTableOptions options;
  options.beside = report::CounterpartPivots(spec, runs, counterparts);
  absl::StatusOr<PaperTable> table = BuildPaperTable(BuildComparePivot(spec, runs, "top1"), options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kText),
            "t\n"
            "recipe     2:4  2:4 ema  2:4 deployable   1:8  1:8 ema  1:8 deployable\n"
            "--------  ----  -------  --------------  ----  -------  --------------\n"
            "dense        -        -               -     -        -               -\n"
            "srste     80.0     81.0            80.0     -        -               -\n"
            "mdgf_exp     -        -               -  70.0     72.0            12.5\n");
}

// Issue 40: a cell whose runs ASHA stopped at a rung shows where they left off (their top-1 at their last
// evaluated epoch, in the table's percent), not just their state; a cell with a finished run keeps only the
// finished runs' mean.
TEST(CompareTableTest, StoppedRunsShowTheirValueAtTheRung) {
  using report::testing::RecipeRun;
  const std::vector<v1::Run> runs = {RecipeRun(1, "srste", "2:4", v1::STOPPED_EARLY, 0),
                                     RecipeRun(2, "mdgf_exp", "1:8", v1::STOPPED_EARLY, 0),
                                     RecipeRun(3, "mdgf_exp", "1:8", v1::STOPPED_EARLY, 0),
                                     RecipeRun(4, "dense", "2:4", v1::SUCCEEDED, 0.80),
                                     RecipeRun(5, "dense", "2:4", v1::STOPPED_EARLY, 0)};
  const report::StoppedValues stopped = {{1, {0.412, 0}}, {2, {0.30, 0}}, {3, {0.40, 1}}, {5, {0.1, 0}}};
  absl::StatusOr<PaperTable> table =
      BuildPaperTable(BuildComparePivot(report::testing::RecipeByNmSweep(), runs, "top1", stopped), {});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(RenderPaperTable(*table, "t", TableFormat::kText),
            "t\n"
            "recipe    2:4                       1:8\n"
            "--------  ------------------------  --------------------------------\n"
            "dense     80.0                      -\n"
            "srste     stopped at epoch 1: 41.2  -\n"
            "mdgf_exp  -                         stopped at epoch 1-2: 35.0 (n=2)\n");
}

TEST(CompareTableTest, FormatNames) {
  EXPECT_EQ(*ParseTableFormat("latex"), TableFormat::kLatex);
  EXPECT_EQ(ParseTableFormat("html").status().message(),
            "--format: 'html' is not a table format (text, markdown, latex, csv)");
}

}  // namespace
}  // namespace nmsparse::cli
