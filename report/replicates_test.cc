// Seeds as replicates (issue 40): the grouping itself, and every view that aggregates runs (search views,
// curves, the final-metric figures) treating runs that differ only in a seed as one configuration.
#include "report/replicates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "report/figures.h"
#include "report/search_views.h"

namespace nmsparse::report {
namespace {

v1::GridAxis* AddAxis(v1::SweepSpec* spec, const std::string& name, const std::string& key,
                      const std::vector<std::string>& labels) {
  v1::GridAxis* axis = spec->add_grid();
  axis->set_name(name);
  for (const std::string& label : labels) {
    v1::AxisValue* v = axis->add_values();
    v->set_label(label);
    (*v->mutable_set())[key] = label;
  }
  return axis;
}

// A grid recipe x sparsity.decay_coef x seed; the runs are added by the tests.
SweepData DecaySweep() {
  SweepData d;
  v1::SweepSpec* spec = d.sweep.mutable_spec();
  AddAxis(spec, "recipe", "sparsity.sparsity_type", {"srste", "mdgf"});
  AddAxis(spec, "decay", "sparsity.decay_coef", {"0.0002", "0.002"});
  AddAxis(spec, "seed", "seed", {"0", "1", "2"});
  return d;
}

RunData MakeRun(int64_t id, const std::string& recipe, const std::string& decay, const std::string& seed,
                double top1) {
  RunData r;
  r.run.set_id(id);
  r.run.set_state(v1::SUCCEEDED);
  r.run.set_finished_at_ms(100 * id);
  for (const char* axis : {"recipe", "decay", "seed"}) r.run.add_label_axes(axis);
  (*r.run.mutable_labels())["recipe"] = recipe;
  (*r.run.mutable_labels())["decay"] = decay;
  (*r.run.mutable_labels())["seed"] = seed;
  r.run.set_resolved_spec(absl::StrCat("model: {name: vit_nano_patch7_28}\nsparsity: {sparsity_type: ",
                                       recipe == "srste" ? "SRSTE" : "STRUCTURED_NM, decay_type: EXP",  // MDGF
                                       ", n_sparsity: 1, m_sparsity: 8}\n"));
  (*r.run.mutable_final_metrics())["top1"] = top1;
  for (int e = 0; e < 2; ++e) {
    v1::MetricPoint p;
    p.set_kind("epoch");
    p.set_epoch(e);
    (*p.mutable_values())["top1"] = top1 - 0.1 * (1 - e);
    r.curve.push_back(p);
  }
  return r;
}

// Two seeds of one configuration (0.6 and 0.8) and one of another (0.5): mean 0.7 and sample std
// sqrt(((0.6-0.7)^2 + (0.8-0.7)^2) / (2-1)) = sqrt(0.02) for the first, n 2 and 1.
SweepData TwoSeedsAndOne() {
  SweepData d = DecaySweep();
  d.runs = {MakeRun(1, "srste", "0.0002", "0", 0.6), MakeRun(2, "srste", "0.0002", "1", 0.8),
            MakeRun(3, "mdgf", "0.002", "0", 0.5)};
  return d;
}

TEST(ReplicatesTest, SeedAxesAreReplicatesAndNameNoConfiguration) {
  const SweepData d = TwoSeedsAndOne();
  EXPECT_EQ(ReplicateAxes(d.sweep.spec()), std::vector<std::string>{"seed"});
  EXPECT_EQ(ConfigurationOf(d.runs[0].run, {"seed"}), "recipe=srste decay=0.0002");
  std::vector<const v1::Run*> runs;
  for (const RunData& r : d.runs) runs.push_back(&r.run);
  const std::vector<Configuration> c = GroupByConfiguration(runs, {"seed"});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].members, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(c[1].members, (std::vector<size_t>{2}));
  EXPECT_TRUE(HasReplicates(c));
  EXPECT_EQ(GroupByConfiguration(runs, {}).size(), 3u);
  // An axis that sets anything besides the seed is a parameter.
  v1::SweepSpec spec = d.sweep.spec();
  (*spec.mutable_grid(2)->mutable_values(0)->mutable_set())["optimizer.lr"] = "0.1";
  EXPECT_TRUE(ReplicateAxes(spec).empty());
}

TEST(ReplicatesTest, TrialsAreConfigurationsWithMeanStdAndCount) {
  const SweepData d = TwoSeedsAndOne();
  const std::vector<SweptParameter> params = SweptParameters(d.sweep.spec());
  ASSERT_EQ(params.size(), 2u);  // recipe and decay; never seed.
  EXPECT_EQ(params[0].name, "recipe");
  EXPECT_EQ(params[1].name, "decay");
  EXPECT_EQ(params[1].ticks, (std::vector<double>{0.0002, 0.002}));
  const Trials t = TrialsOf(d, params, "top1");
  ASSERT_EQ(t.objective.size(), 2u);
  EXPECT_EQ(t.run_ids, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(t.replicates, (std::vector<int>{2, 1}));
  EXPECT_NEAR(t.objective[0], 0.7, 1e-15);
  EXPECT_NEAR(t.spread[0], std::sqrt(0.02), 1e-15);
  EXPECT_EQ(t.objective[1], 0.5);
  EXPECT_EQ(t.spread[1], 0.0);
  EXPECT_TRUE(t.any_replicates());
}

TEST(ReplicatesTest, SearchViewsLeaveTheSeedOut) {
  SweepData d = TwoSeedsAndOne();
  d.runs.push_back(MakeRun(4, "mdgf", "0.0002", "0", 0.4));
  const Figure pc = ParallelCoordinates(d, "top1");
  std::vector<std::string> labels;
  for (const Dimension& dim : pc.dimensions) labels.push_back(dim.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"recipe", "decay", "top1 std over seed", "mean final top1"}));
  EXPECT_EQ(pc.run_ids, (std::vector<int64_t>{1, 3, 4}));                   // One line per configuration.
  EXPECT_EQ(pc.dimensions[1].ticks, (std::vector<double>{0.0002, 0.002}));  // Discrete, not 9 to 15.
  EXPECT_NEAR(pc.dimensions[2].values[0], std::sqrt(0.02), 1e-15);
  EXPECT_NEAR(pc.dimensions[3].values[0], 0.7, 1e-15);
  const Figure importance = Importances(d, "top1");
  ASSERT_EQ(importance.series.size(), 1u);
  std::vector<std::string> names = importance.series[0].categories;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"decay", "recipe"}));
  for (const Figure& slice : Slices(d, "top1")) {
    ASSERT_EQ(slice.series.size(), 1u);
    EXPECT_EQ(slice.series[0].x.size(), 3u) << slice.id;  // Configurations, not runs.
    EXPECT_EQ(slice.series[0].err.size(), 3u) << slice.id;
  }
}

TEST(ReplicatesTest, CurvesAreOneBandPerConfigurationWithTheRunsHidden) {
  const Figure f = EvalCurves(TwoSeedsAndOne(), "top1");
  ASSERT_EQ(f.series.size(), 5u);  // Two bands, then the three runs.
  EXPECT_EQ(f.series[0].style, Series::Style::kBand);
  EXPECT_EQ(f.series[0].name, "recipe=srste decay=0.0002 mean \u00b1 std (2 runs)");
  EXPECT_EQ(f.series[0].group, "SRSTE");
  EXPECT_EQ(f.series[0].x, (std::vector<double>{1, 2}));
  EXPECT_NEAR(f.series[0].y[1], 0.7, 1e-15);
  EXPECT_NEAR(f.series[0].err[1], std::sqrt(0.02), 1e-15);
  EXPECT_EQ(f.series[1].group, "MDGF");
  EXPECT_EQ(f.series[1].err, (std::vector<double>{0, 0}));
  for (size_t i = 2; i < 5; ++i) EXPECT_TRUE(f.series[i].hidden);
  EXPECT_EQ(f.series[2].legend_group, f.series[0].name + ": each run");
  EXPECT_EQ(f.series[4].legend_group, f.series[1].name + ": each run");
}

TEST(ReplicatesTest, RunsWithoutReplicatesKeepTheirOwnLinesColouredByRecipe) {
  SweepData d = TwoSeedsAndOne();
  d.runs.erase(d.runs.begin() + 1);
  const Figure f = EvalCurves(d, "top1");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].style, Series::Style::kLines);
  EXPECT_FALSE(f.series[0].hidden);
  EXPECT_EQ(f.series[0].group, "SRSTE");
}

TEST(ReplicatesTest, MetricVsDecayPerRecipeWithBarsOverSeeds) {
  SweepData d = TwoSeedsAndOne();
  d.runs.push_back(MakeRun(4, "srste", "0.002", "0", 0.3));
  const std::vector<Figure> figures = MetricVsAxes(d, "top1");
  ASSERT_EQ(figures.size(), 1u);  // decay; not seed, not recipe (not a number).
  const Figure& f = figures[0];
  EXPECT_EQ(f.id, "top1_vs_decay");
  EXPECT_TRUE(f.log_x == false);  // One decade.
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].name, "recipe=srste");
  EXPECT_EQ(f.series[0].x, (std::vector<double>{0.0002, 0.002}));
  EXPECT_NEAR(f.series[0].y[0], 0.7, 1e-15);
  EXPECT_NEAR(f.series[0].err[0], std::sqrt(0.02), 1e-15);
  EXPECT_EQ(f.series[0].y[1], 0.3);
  EXPECT_EQ(f.series[0].err[1], 0.0);
  EXPECT_EQ(f.series[1].name, "recipe=mdgf");
  EXPECT_EQ(f.series[1].group, "MDGF");
}

TEST(ReplicatesTest, FinalMetricFiguresNeedTwoValuesOfX) {
  // Every run the same size and FLOPs: no figure of top1 against them.
  SweepData d = TwoSeedsAndOne();
  for (RunData& r : d.runs) {
    (*r.run.mutable_final_metrics())["params"] = 1e5;
    (*r.run.mutable_final_metrics())["flops"] = 1e9;
  }
  for (const Figure& f : SweepFigures(d, "top1")) {
    EXPECT_NE(f.id, "top1_vs_params");
    EXPECT_NE(f.id, "top1_vs_train_flops");
    EXPECT_NE(f.id, "top1_vs_density");  // All runs 1:8.
  }
  bool decay = false;
  for (const Figure& f : SweepFigures(d, "top1")) decay = decay || f.id == "top1_vs_decay";
  EXPECT_TRUE(decay);
}

}  // namespace
}  // namespace nmsparse::report
