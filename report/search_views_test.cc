#include "report/search_views.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/figures.h"

namespace nmsparse::report {
namespace {

// A run that finished at `finished_ms` with final `metric` = value and the given axis labels.
RunData Run(int64_t id, int64_t finished_ms, v1::RunState state, const std::string& metric, double value,
            const std::map<std::string, std::string>& labels) {
  RunData r;
  r.run.set_id(id);
  r.run.set_state(state);
  r.run.set_finished_at_ms(finished_ms);
  if (!metric.empty()) (*r.run.mutable_final_metrics())[metric] = value;
  for (const auto& [k, v] : labels) (*r.run.mutable_labels())[k] = v;
  return r;
}

// A search over a log-uniform lr and a choice of optimiser.
SweepData SearchSweep(const std::string& metric, const std::string& mode) {
  SweepData d;
  v1::SweepSpec* spec = d.sweep.mutable_spec();
  v1::RandomAxis* lr = spec->add_random();
  lr->set_key("optimizer.lr");
  lr->set_min(1e-4);
  lr->set_max(1e-1);
  lr->set_log(true);
  v1::RandomAxis* opt = spec->add_random();
  opt->set_key("optimizer.name");
  opt->add_choices("sgd");
  opt->add_choices("adamw");
  spec->mutable_search()->set_algorithm("tpe");
  spec->mutable_search()->set_metric(metric);
  spec->mutable_search()->set_mode(mode);
  // Finish order 3, 1, 4, 2 (ids), one failed run and one without the metric.
  d.runs.push_back(
      Run(1, 200, v1::SUCCEEDED, metric, 0.5, {{"optimizer.lr", "0.001"}, {"optimizer.name", "sgd"}}));
  d.runs.push_back(
      Run(2, 400, v1::SUCCEEDED, metric, 0.9, {{"optimizer.lr", "0.1"}, {"optimizer.name", "adamw"}}));
  d.runs.push_back(
      Run(3, 100, v1::SUCCEEDED, metric, 0.7, {{"optimizer.lr", "0.01"}, {"optimizer.name", "adamw"}}));
  d.runs.push_back(
      Run(4, 300, v1::SUCCEEDED, metric, 0.6, {{"optimizer.lr", "0.0001"}, {"optimizer.name", "sgd"}}));
  d.runs.push_back(
      Run(5, 50, v1::FAILED, metric, 0.99, {{"optimizer.lr", "0.05"}, {"optimizer.name", "sgd"}}));
  d.runs.push_back(Run(6, 60, v1::SUCCEEDED, "", 0, {{"optimizer.lr", "0.05"}, {"optimizer.name", "sgd"}}));
  return d;
}

TEST(SearchViewsTest, HistoryIsInFinishOrderWithBestSoFarOfAMaximisedMetric) {
  const Figure f = OptimisationHistory(SearchSweep("top1", "max"), "top1");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].x, std::vector<double>({1, 2, 3, 4}));
  EXPECT_EQ(f.series[0].y,
            std::vector<double>({0.7, 0.5, 0.6, 0.9}));  // Failed and metric-less runs skipped.
  EXPECT_EQ(f.series[0].run_ids, std::vector<int64_t>({3, 1, 4, 2}));
  EXPECT_EQ(f.series[1].name, "best so far");
  EXPECT_EQ(f.series[1].y, std::vector<double>({0.7, 0.7, 0.7, 0.9}));
  EXPECT_EQ(f.series[1].run_ids, std::vector<int64_t>({3, 3, 3, 2}));
}

TEST(SearchViewsTest, BestSoFarOfAMinimisedMetric) {
  const Figure f = OptimisationHistory(SearchSweep("eval_loss", "min"), "eval_loss");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[1].y, std::vector<double>({0.7, 0.5, 0.5, 0.5}));
}

TEST(SearchViewsTest, UndeclaredMetricTakesTheSearchModeElseHasNoBestLine) {
  EXPECT_EQ(OptimisationHistory(SearchSweep("my_score", "min"), "my_score").series.at(1).y,
            std::vector<double>({0.7, 0.5, 0.5, 0.5}));
  SweepData d = SearchSweep("my_score", "min");
  d.sweep.mutable_spec()->mutable_search()->set_metric("other");
  const Figure f = OptimisationHistory(d, "my_score");
  EXPECT_EQ(f.series.size(), 1u);
  EXPECT_NE(f.caption.find("no declared direction"), std::string::npos);
}

TEST(SearchViewsTest, ParallelCoordinatesHaveLogAndCategoricalAxesAndTheObjectiveLast) {
  const Figure f = ParallelCoordinates(SearchSweep("top1", "max"), "top1");
  EXPECT_EQ(f.kind, Figure::Kind::kParallelCoordinates);
  ASSERT_EQ(f.dimensions.size(), 3u);
  EXPECT_EQ(f.dimensions[0].label, "optimizer.lr");
  EXPECT_TRUE(f.dimensions[0].log);
  ASSERT_EQ(f.dimensions[0].values.size(), 4u);  // In trial order, on a log axis.
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(f.dimensions[0].values[i], std::vector<double>({1e-2, 1e-3, 1e-4, 1e-1})[i], 1e-12);
  EXPECT_EQ(f.dimensions[1].categories, std::vector<std::string>({"sgd", "adamw"}));
  EXPECT_EQ(f.dimensions[1].values, std::vector<double>({1, 0, 0, 1}));
  EXPECT_EQ(f.dimensions[2].label, "final top1");
  EXPECT_EQ(f.dimensions[2].values, std::vector<double>({0.7, 0.5, 0.6, 0.9}));
  EXPECT_EQ(f.run_ids, std::vector<int64_t>({3, 1, 4, 2}));
}

TEST(SearchViewsTest, SlicesOnePerParameter) {
  const std::vector<Figure> s = Slices(SearchSweep("top1", "max"), "top1");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].id, "search_slice_top1_0_optimizer_lr");  // [a-z0-9_]: the dashboard's figure route.
  EXPECT_EQ(s[1].id, "search_slice_top1_1_optimizer_name");
  EXPECT_TRUE(s[0].log_x);
  EXPECT_NEAR(s[0].series[0].x[0], 0.01, 1e-12);  // Drawn at the value, on a log axis.
  EXPECT_EQ(s[1].series[0].x, std::vector<double>({1, 0, 0, 1}));
  EXPECT_EQ(s[1].series[0].categories, std::vector<std::string>({"adamw", "sgd", "sgd", "adamw"}));
}

TEST(SearchViewsTest, ImportancesAreSortedBarsSummingToOne) {
  const Figure f = Importances(SearchSweep("top1", "max"), "top1");
  ASSERT_EQ(f.series.size(), 1u);
  const Series& bars = f.series[0];
  EXPECT_EQ(bars.style, Series::Style::kBars);
  ASSERT_EQ(bars.categories.size(), 2u);
  EXPECT_GE(bars.y[0], bars.y[1]);
  EXPECT_NEAR(bars.y[0] + bars.y[1], 1.0, 1e-9);
}

TEST(SearchViewsTest, GridAxesNumericOrCategorical) {
  v1::SweepSpec spec;
  v1::GridAxis* nm = spec.add_grid();
  nm->set_name("sparsity.m_sparsity");
  nm->add_values()->set_label("4");
  nm->add_values()->set_label("8");
  v1::GridAxis* recipe = spec.add_grid();
  recipe->set_name("recipe");
  recipe->add_values()->set_label("srste");
  recipe->add_values()->set_label("mdgf_exp");
  v1::GridAxis* single = spec.add_grid();  // One value: not swept.
  single->set_name("single");
  single->add_values()->set_label("x");
  const std::vector<SweptParameter> p = SweptParameters(spec);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].categories.empty());
  EXPECT_EQ(p[0].low, 4);
  EXPECT_EQ(p[0].high, 8);
  EXPECT_EQ(p[1].categories, std::vector<std::string>({"srste", "mdgf_exp"}));
}

TEST(SearchViewsTest, TooFewRunsSaySoInACaption) {
  SweepData d = SearchSweep("top1", "max");
  d.runs.resize(1);
  const std::vector<Figure> views = SearchViews(d, "top1");
  ASSERT_EQ(views.size(), 1u);
  EXPECT_TRUE(views[0].series.empty());
  EXPECT_NE(views[0].caption.find("this sweep has 1 such run and no parameter that varies."),
            std::string::npos)
      << views[0].caption;
  EXPECT_TRUE(SearchViews(SweepData{}, "top1").empty());  // No swept parameter: no search views at all.
}

TEST(SearchViewsTest, SweepFiguresIncludeTheViews) {
  const std::vector<Figure> all = SweepFigures(SearchSweep("top1", "max"), "top1");
  int search = 0;
  for (const Figure& f : all) search += f.id.rfind("search_", 0) == 0;
  EXPECT_EQ(search, 5);  // History, parallel coordinates, two slices, importances.
}

}  // namespace
}  // namespace nmsparse::report
