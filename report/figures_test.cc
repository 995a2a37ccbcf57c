#include "report/figures.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "report/curve_groups.h"
#include "report/pareto.h"
#include "report/run_facts.h"
#include "schemas/recipe.h"

namespace nmsparse::report {
namespace {

constexpr char kModel[] = "model: {name: vit_micro_patch4_28}\n";

// A run whose spec is `type` n:m (n = 0: the default N:M) on the micro ViT.
RunData MakeRun(int64_t id, const std::string& type, uint32_t n, uint32_t m, double top1, double flops) {
  RunData r;
  r.run.set_id(id);
  r.run.set_state(v1::SUCCEEDED);
  const std::string nm = n == 0 ? "" : absl::StrCat(", n_sparsity: ", n, ", m_sparsity: ", m);
  r.run.set_resolved_spec(absl::StrCat(kModel, "sparsity: {sparsity_type: ", type, nm, "}\n"));
  (*r.run.mutable_final_metrics())["top1"] = top1;
  (*r.run.mutable_final_metrics())["flops"] = flops;
  return r;
}

TEST(ParetoFrontTest, HandMadeSet) {
  // (cost, quality): 0 and 2 and 4 are on the front; 1 is beaten by 0 (cheaper, better), 3 by 2 (same cost,
  // better), 5 by 4 (equal: the first is kept).
  const std::vector<CostQuality> points = {{1, 50}, {2, 40}, {3, 70}, {3, 60}, {5, 80}, {5, 80}, {4, 65}};
  EXPECT_EQ(ParetoFront(points), (std::vector<size_t>{0, 2, 4}));
}

// A diverged run (NaN quality) is on no front, and does not hide the finite points behind it: with NaN first,
// every later `quality > NaN` was false and the front was the NaN alone.
TEST(ParetoFrontTest, NonFinitePointsAreOnNoFront) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<CostQuality> points = {{1, nan}, {2, 40}, {3, 70}, {nan, 90}};
  EXPECT_EQ(ParetoFront(points), (std::vector<size_t>{1, 2}));
}

TEST(ParetoFrontTest, EmptyAndSingle) {
  EXPECT_TRUE(ParetoFront({}).empty());
  EXPECT_EQ(ParetoFront({{7, 1}}), std::vector<size_t>{0});
}

TEST(RunFactsTest, RecipeAndDensity) {
  SparsityConfig s;
  EXPECT_EQ(RecipeOf(s), "DENSE");
  EXPECT_EQ(DensityOf(s), 1.0);
  s.sparsity_type = SparsityType::kSrste;
  s.nm = {2, 8};
  EXPECT_EQ(RecipeOf(s), "SRSTE");
  EXPECT_EQ(DensityOf(s), 0.25);
  s.sparsity_type = SparsityType::kStructuredNM;
  EXPECT_EQ(RecipeOf(s), "STE");
  s.decay_type = DecayType::kExp;
  EXPECT_EQ(RecipeOf(s), "MDGF");
  s.decay_type = DecayType::kStep;
  s.structure_decay_flag = true;
  EXPECT_EQ(RecipeOf(s), "SDGF");
  s.sparsity_type = SparsityType::kUnstructured;
  EXPECT_EQ(RecipeOf(s), "UNSTRUCTURED");
  // A run listed without its spec reads as the default section.
  EXPECT_EQ(RecipeOf(RunSparsity(v1::Run())), "DENSE");
}

TEST(RunFactsTest, InferenceFlopsShrinkWithDensity) {
  const double dense = InferenceFlops(MakeRun(1, "DENSE", 0, 0, 0, 0).run);
  const double half = InferenceFlops(MakeRun(2, "SRSTE", 2, 4, 0, 0).run);
  const double quarter = InferenceFlops(MakeRun(3, "SRSTE", 1, 4, 0, 0).run);
  ASSERT_TRUE(std::isfinite(dense));
  EXPECT_LT(half, dense);
  EXPECT_LT(quarter, half);
  // Linear in the pruned fraction.
  EXPECT_NEAR(dense - half, (half - quarter) * 2, 1e-6 * dense);
  // The spec's model_kwargs count: a deeper model costs more.
  RunData deeper = MakeRun(5, "DENSE", 0, 0, 0, 0);
  deeper.run.set_resolved_spec(
      absl::StrCat("model: {name: vit_micro_patch4_28, depth: 8}\n", "sparsity: {sparsity_type: DENSE}\n"));
  EXPECT_GT(InferenceFlops(deeper.run), 1.9 * dense);
  RunData unknown = MakeRun(4, "DENSE", 0, 0, 0, 0);
  unknown.run.set_resolved_spec("model: {name: no_such_model}\n");
  EXPECT_TRUE(std::isnan(InferenceFlops(unknown.run)));
  // The trainer's count, when its final line has one (docs/sparsity-method.md §10).
  RunData reported = MakeRun(6, "SRSTE", 2, 4, 0, 0);
  (*reported.run.mutable_final_metrics())["inference_flops"] = 123.0;
  EXPECT_EQ(InferenceFlops(reported.run), 123.0);
}

TEST(FiguresTest, MeanAndStdPerRecipeAndDensity) {
  SweepData data;
  // SRSTE 2:4 over three seeds: mean 0.7, sample std 0.1; SRSTE 1:4 one run; dense two runs.
  data.runs = {MakeRun(1, "SRSTE", 2, 4, 0.6, 1e9), MakeRun(2, "SRSTE", 2, 4, 0.7, 1e9),
               MakeRun(3, "SRSTE", 2, 4, 0.8, 1e9), MakeRun(4, "SRSTE", 1, 4, 0.5, 1e9),
               MakeRun(5, "DENSE", 0, 0, 0.9, 2e9), MakeRun(6, "DENSE", 0, 0, 0.9, 2e9)};
  RunData failed = MakeRun(7, "SRSTE", 2, 4, 0.0, 1e9);
  failed.run.set_state(v1::FAILED);
  data.runs.push_back(failed);
  const Figure f = MetricVsDensity(data, "top1");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].name, "SRSTE");
  EXPECT_EQ(f.series[0].x, (std::vector<double>{0.25, 0.5}));
  EXPECT_NEAR(f.series[0].y[1], 0.7, 1e-12);
  EXPECT_NEAR(f.series[0].err[1], 0.1, 1e-12);
  EXPECT_EQ(f.series[0].err[0], 0.0);
  EXPECT_EQ(f.series[1].name, "DENSE");
  EXPECT_EQ(f.series[1].x, std::vector<double>{1.0});
  EXPECT_NEAR(f.series[1].y[0], 0.9, 1e-12);
}

TEST(FiguresTest, FlopsFigureMarksTheFront) {
  SweepData data;
  data.runs = {MakeRun(1, "SRSTE", 2, 4, 0.7, 1e9), MakeRun(2, "SRSTE", 1, 4, 0.6, 2e9),
               MakeRun(3, "DENSE", 0, 0, 0.9, 3e9)};
  const Figure f = MetricVsFlops(data, "top1", /*training=*/true);
  ASSERT_EQ(f.series.size(), 3u);
  EXPECT_TRUE(f.log_x);
  const Series& front = f.series.back();
  EXPECT_EQ(front.style, Series::Style::kFront);
  EXPECT_EQ(front.x, (std::vector<double>{1e9, 3e9}));  // Run 2 costs more than run 1 and is worse.
  EXPECT_EQ(front.y, (std::vector<double>{0.7, 0.9}));
}

// A sweep over model size: one series per recipe at the parameters each run reported; a run that reported
// none (an older trainer) is left out.
TEST(FiguresTest, ParametersFigureHasOneSeriesPerRecipe) {
  SweepData data;
  const std::vector<std::pair<double, double>> sizes = {{1e5, 0.6}, {2e5, 0.7}};
  for (const auto& [params, top1] : sizes) {
    for (auto type : {"DENSE", "SRSTE"}) {
      RunData r = MakeRun(static_cast<int64_t>(data.runs.size()) + 1, type, 2, 4, top1, 1e9);
      (*r.run.mutable_final_metrics())["params"] = params;
      data.runs.push_back(r);
    }
  }
  data.runs.push_back(MakeRun(9, "SRSTE", 2, 4, 0.9, 1e9));
  const Figure f = MetricVsParameters(data, "top1");
  EXPECT_EQ(f.id, "top1_vs_params");
  EXPECT_EQ(f.x_label, "parameters");
  EXPECT_EQ(f.y_label, "final top1");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].name, "DENSE");
  EXPECT_EQ(f.series[1].name, "SRSTE");
  EXPECT_EQ(f.series[1].x, (std::vector<double>{1e5, 2e5}));
  EXPECT_EQ(f.series[1].y, (std::vector<double>{0.6, 0.7}));
}

// Issue 27: the front follows the metric's declared direction: for eval_loss lower is better; a metric with
// no declared direction gets no front.
TEST(FiguresTest, FlopsFrontOfALossMinimizesIt) {
  SweepData data;
  data.runs = {MakeRun(1, "SRSTE", 2, 4, 0, 1e9), MakeRun(2, "SRSTE", 1, 4, 0, 2e9),
               MakeRun(3, "DENSE", 0, 0, 0, 3e9)};
  const double losses[] = {0.7, 0.6, 0.9};
  for (int i = 0; i < 3; ++i) {
    (*data.runs[i].run.mutable_final_metrics())["eval_loss"] = losses[i];
    (*data.runs[i].run.mutable_final_metrics())["acc"] = losses[i];
  }
  const Series front = MetricVsFlops(data, "eval_loss", /*training=*/true).series.back();
  EXPECT_EQ(front.style, Series::Style::kFront);
  EXPECT_EQ(front.x, (std::vector<double>{1e9, 2e9}));  // Run 3 costs most and has the highest loss.
  EXPECT_EQ(front.y, (std::vector<double>{0.7, 0.6}));
  for (const Series& s : MetricVsFlops(data, "acc", /*training=*/true).series) {
    EXPECT_NE(s.style, Series::Style::kFront);
  }
}

TEST(FiguresTest, CurvesUseStepAndEpochPoints) {
  RunData r = MakeRun(9, "DENSE", 0, 0, 0.9, 1);
  (*r.run.mutable_labels())["recipe"] = "dense";
  for (int i = 0; i < 3; ++i) {
    v1::MetricPoint p;
    p.set_kind("step");
    p.set_step(10 * (i + 1));
    (*p.mutable_values())["loss"] = 2.0 - i;
    r.curve.push_back(p);
  }
  v1::MetricPoint e;
  e.set_kind("epoch");
  e.set_epoch(1);
  (*e.mutable_values())["top1"] = 0.5;
  r.curve.push_back(e);
  SweepData data;
  data.runs = {r};
  const Figure loss = LossCurves(data);
  ASSERT_EQ(loss.series.size(), 1u);
  EXPECT_EQ(loss.series[0].name, "run 9 recipe=dense");
  EXPECT_EQ(loss.series[0].x, (std::vector<double>{10, 20, 30}));
  const Figure top1 = EvalCurves(data, "top1");
  ASSERT_EQ(top1.series.size(), 1u);
  EXPECT_EQ(top1.series[0].y, std::vector<double>{0.5});
  // Issue 27: the line of epoch index 1 ends the second epoch, drawn at x = 2 (epochs 1-indexed).
  EXPECT_EQ(top1.series[0].x, std::vector<double>{2});
  EXPECT_EQ(top1.series[0].run_ids, std::vector<int64_t>{9});
  EXPECT_EQ(loss.series[0].run_ids, (std::vector<int64_t>{9, 9, 9}));
}

// Issue 29: past kMaxRunCurves runs a curve figure has one mean ± std line per recipe x N:M group and the top
// runs by their last value (run ids set), not one legend entry per run.
TEST(FiguresTest, ManyRunsAreDrawnAsGroupsAndTopRuns) {
  SweepData data;
  for (int i = 0; i < 60; ++i) {
    const bool dense = i % 2 == 0;
    RunData r = MakeRun(i + 1, dense ? "DENSE" : "SRSTE", dense ? 0 : 2, dense ? 0 : 4, 0.5, 1);
    for (int epoch = 1; epoch <= 2; ++epoch) {
      v1::MetricPoint e;
      e.set_kind("epoch");
      e.set_epoch(epoch - 1);  // The trainer's epochs are 0-based; the figures show them from 1.
      (*e.mutable_values())["top1"] = 0.1 * epoch + 0.001 * i;  // Run 60 (i = 59) ends best.
      r.curve.push_back(e);
    }
    data.runs.push_back(r);
  }
  const Figure top1 = EvalCurves(data, "top1");
  ASSERT_EQ(top1.series.size(), 2 + kTopRunCurves);
  EXPECT_EQ(top1.series[0].name, "DENSE mean \u00b1 std (30 runs)");
  EXPECT_EQ(top1.series[1].name, "SRSTE 2:4 mean \u00b1 std (30 runs)");
  EXPECT_EQ(top1.series[0].style, Series::Style::kErrorBars);
  EXPECT_EQ(top1.series[0].x, (std::vector<double>{1, 2}));
  EXPECT_NEAR(top1.series[0].y[1], 0.2 + 0.001 * 29, 1e-9);  // Mean of i = 0, 2, ..., 58.
  EXPECT_GT(top1.series[0].err[1], 0);
  EXPECT_EQ(top1.series[2].run_ids, (std::vector<int64_t>{60, 60}));
  EXPECT_EQ(top1.series[3].run_ids, (std::vector<int64_t>{59, 59}));
  // A loss is ranked lowest first.
  for (RunData& r : data.runs) {
    for (v1::MetricPoint& p : r.curve) (*p.mutable_values())["loss"] = p.values().at("top1");
  }
  const Figure loss = LossCurves(data);
  ASSERT_EQ(loss.series.size(), 2 + kTopRunCurves);
  EXPECT_EQ(loss.series[2].run_ids.front(), 1);
  // At the limit, every run keeps its line.
  data.runs.resize(kMaxRunCurves);
  EXPECT_EQ(EvalCurves(data, "top1").series.size(), kMaxRunCurves);
}

// docs/sparsity-method.md §11: flip rate and |g| pruned / |g| kept per epoch, only for runs that report them.
TEST(FiguresTest, DiagnosticsCurvesPerSparseRun) {
  RunData sparse = MakeRun(3, "SRSTE", 1, 4, 0.5, 1e9);
  for (int epoch = 0; epoch < 2; ++epoch) {
    v1::MetricPoint e;
    e.set_kind("epoch");
    e.set_epoch(epoch);
    if (epoch > 0) (*e.mutable_values())["flip_rate"] = 0.125;  // None at the first log point.
    (*e.mutable_values())["grad_norm_pruned"] = 1.0 + epoch;
    (*e.mutable_values())["grad_norm_kept"] = 4.0;
    sparse.curve.push_back(e);
  }
  RunData dense = MakeRun(4, "DENSE", 0, 0, 0.5, 1e9);
  v1::MetricPoint e;
  e.set_kind("epoch");
  (*e.mutable_values())["top1"] = 0.5;
  dense.curve.push_back(e);
  SweepData data;
  data.runs = {sparse, dense};
  const Figure flips = FlipRateCurves(data);
  ASSERT_EQ(flips.series.size(), 1u);
  EXPECT_EQ(flips.series[0].x, std::vector<double>{2});
  EXPECT_EQ(flips.series[0].y, std::vector<double>{0.125});
  const Figure ratio = PrunedKeptGradientCurves(data);
  ASSERT_EQ(ratio.series.size(), 1u);
  EXPECT_EQ(ratio.series[0].name, flips.series[0].name);
  EXPECT_EQ(ratio.series[0].x, (std::vector<double>{1, 2}));
  EXPECT_EQ(ratio.series[0].y, (std::vector<double>{0.25, 0.5}));
}

// Issue 42: a short run that logs flip rates at step points (log_every_steps) draws them as a curve against
// step, beside a run that logged them per epoch only (at the step its epochs end); bands per recipe over
// seeds come from AddRunCurves as for epoch points.
TEST(FiguresTest, FlipRateCurvesUseStepPointsWhenRunsLogThem) {
  RunData stepwise = MakeRun(3, "HU24", 2, 4, 0.5, 1e9);
  for (int step = 5; step <= 20; step += 5) {
    v1::MetricPoint p;
    p.set_kind("step");
    p.set_step(step);
    if (step > 5) (*p.mutable_values())["flip_rate"] = step / 100.0;  // None at the first log point.
    stepwise.curve.push_back(p);
  }
  v1::MetricPoint end;
  end.set_kind("epoch");
  end.set_epoch(0);
  end.set_step(20);
  (*end.mutable_values())["flip_rate"] = 0.2;
  stepwise.curve.push_back(end);
  RunData epochwise = MakeRun(4, "SRSTE", 2, 4, 0.5, 1e9);
  for (int epoch = 0; epoch < 2; ++epoch) {
    v1::MetricPoint e;
    e.set_kind("epoch");
    e.set_epoch(epoch);
    e.set_step(10 * (epoch + 1));
    (*e.mutable_values())["flip_rate"] = 0.5;
    epochwise.curve.push_back(e);
  }
  SweepData data;
  data.runs = {stepwise, epochwise};
  const Figure flips = FlipRateCurves(data);
  EXPECT_EQ(flips.x_label, "step");
  ASSERT_EQ(flips.series.size(), 2u);
  EXPECT_EQ(flips.series[0].x, (std::vector<double>{10, 15, 20}));
  EXPECT_EQ(flips.series[0].y, (std::vector<double>{0.1, 0.15, 0.2}));
  EXPECT_EQ(flips.series[1].x, (std::vector<double>{10, 20}));
  EXPECT_EQ(flips.series[1].y, (std::vector<double>{0.5, 0.5}));
}

// Issue 22: `nmctl report --metric ../../x` names no file outside the report's directory.
TEST(FiguresTest, FigureIdsAreFileNames) {
  for (const Figure& f : SweepFigures(SweepData{}, "../../x/" + std::string(500, 'm'))) {
    EXPECT_EQ(f.id.find('/'), std::string::npos) << f.id;
    EXPECT_NE(f.id.rfind(".", 0), 0u) << f.id;
    EXPECT_LE(f.id.size(), 100u) << f.id;
  }
  EXPECT_EQ(EvalCurves(SweepData{}, "top1").id, "curves_top1");
}

}  // namespace
}  // namespace nmsparse::report
