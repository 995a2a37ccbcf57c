#include "report/run_marks_cap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "report/figure_json.h"
#include "report/figures.h"

namespace nmsparse::report {
namespace {

// `n` succeeded runs, ids 1..n, top1 = a scrambled function of the id (so that order and id disagree).
SweepData Runs(int n) {
  SweepData data;
  for (int id = 1; id <= n; ++id) {
    RunData r;
    r.run.set_id(id);
    r.run.set_state(v1::SUCCEEDED);
    r.run.set_resolved_spec("model: {name: vit_micro_patch4_28}\n");
    (*r.run.mutable_final_metrics())["top1"] = ((id * 7919) % n) / static_cast<double>(n);
    data.runs.push_back(r);
  }
  return data;
}

// A scatter and parallel coordinates of every run, a best-so-far line of 400 points, and a front.
std::vector<Figure> PerRunFigures(const SweepData& data) {
  Figure scatter;
  scatter.id = "scatter";
  scatter.caption = "Each run.";
  Series points;
  points.style = Series::Style::kPoints;
  Figure parallel;
  parallel.id = "parallel";
  parallel.kind = Figure::Kind::kParallelCoordinates;
  Dimension objective;
  objective.label = "top1";
  for (const RunData& r : data.runs) {
    points.x.push_back(static_cast<double>(r.run.id()));
    points.y.push_back(r.run.final_metrics().at("top1"));
    points.run_ids.push_back(r.run.id());
    objective.values.push_back(r.run.final_metrics().at("top1"));
    parallel.run_ids.push_back(r.run.id());
  }
  Series best;  // kLines, without runs.
  for (int i = 0; i < 400; ++i) {
    best.x.push_back(i);
    best.y.push_back(i / 100);  // Four flat stretches.
  }
  Series front;
  front.style = Series::Style::kFront;
  front.x = {1, 2};
  front.y = {0.5, 0.6};
  front.run_ids = {1, 2};
  scatter.series = {points, best, front};
  parallel.dimensions = {objective};
  return {scatter, parallel};
}

// The y of a polyline at `x` (linear between its points).
double At(const Series& s, double x) {
  const size_t i = std::upper_bound(s.x.begin(), s.x.end(), x) - s.x.begin();
  if (i == 0) return s.y.front();
  if (i == s.x.size()) return s.y.back();
  const double t = (x - s.x[i - 1]) / (s.x[i] - s.x[i - 1]);
  return s.y[i - 1] + t * (s.y[i] - s.y[i - 1]);
}

TEST(RunMarksCapTest, EveryFigureKeepsTheSameChosenRunsWithBothEndsOfTheMetric) {
  const SweepData data = Runs(300);
  std::vector<Figure> figures = PerRunFigures(data);
  const std::vector<Figure> before = figures;
  CapRunMarks(data, "top1", 100, figures);

  const Series& points = figures[0].series[0];
  const std::set<int64_t> chosen(points.run_ids.begin(), points.run_ids.end());
  EXPECT_EQ(chosen.size(), 100u);
  EXPECT_EQ(std::set<int64_t>(figures[1].run_ids.begin(), figures[1].run_ids.end()), chosen);
  ASSERT_EQ(figures[1].dimensions[0].values.size(), 100u);
  for (size_t i = 0; i < points.run_ids.size(); ++i) {
    EXPECT_EQ(points.y[i], data.runs[points.run_ids[i] - 1].run.final_metrics().at("top1"));
    EXPECT_EQ(figures[1].dimensions[0].values[i], points.y[i]);  // Both in run order.
  }
  // The 10 best and 10 worst by top1 are among them.
  std::vector<std::pair<double, int64_t>> ranked;
  for (const RunData& r : data.runs) ranked.emplace_back(r.run.final_metrics().at("top1"), r.run.id());
  std::sort(ranked.begin(), ranked.end());
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(chosen.count(ranked[i].second)) << ranked[i].second;
    EXPECT_TRUE(chosen.count(ranked[ranked.size() - 1 - i].second)) << ranked[ranked.size() - 1 - i].second;
  }
  EXPECT_NE(figures[0].caption.find("Marks of 100 of the 300 runs"), std::string::npos) << figures[0].caption;

  EXPECT_EQ(figures[0].series[2].x, before[0].series[2].x);  // The front is whole.
}

TEST(RunMarksCapTest, ALineWithoutRunsLosesOnlyItsFlatInnerPoints) {
  const SweepData data = Runs(300);
  std::vector<Figure> figures = PerRunFigures(data);
  const Series line = figures[0].series[1];
  CapRunMarks(data, "top1", 100, figures);
  const Series& thinned = figures[0].series[1];
  EXPECT_EQ(thinned.x.size(), 8u);  // The two ends of each of the four flat stretches.
  for (size_t i = 0; i < line.x.size(); ++i) EXPECT_EQ(At(thinned, line.x[i]), line.y[i]) << line.x[i];
}

TEST(RunMarksCapTest, TheChoiceDependsOnRunIdsNotTheirOrder) {
  SweepData data = Runs(300);
  std::vector<Figure> first = PerRunFigures(data);
  CapRunMarks(data, "top1", 100, first);
  std::reverse(data.runs.begin(), data.runs.end());
  std::vector<Figure> second = PerRunFigures(data);
  CapRunMarks(data, "top1", 100, second);
  const std::vector<int64_t>& a = first[0].series[0].run_ids;
  const std::vector<int64_t>& b = second[0].series[0].run_ids;
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()), std::set<int64_t>(b.begin(), b.end()));
}

TEST(RunMarksCapTest, SweepsWithinTheCapAreUntouched) {
  const SweepData data = Runs(100);
  std::vector<Figure> figures = PerRunFigures(data);
  CapRunMarks(data, "top1", 100, figures);
  EXPECT_EQ(figures[0].series[0].run_ids.size(), 100u);
  EXPECT_EQ(figures[0].series[1].x.size(), 400u);
  EXPECT_EQ(figures[0].caption, "Each run.");
}

// The sweep's figures and their document: at most kMaxRunMarks runs marked in any figure, and named.
TEST(RunMarksCapTest, SweepFiguresOfALargeSweepAreCapped) {
  SweepData data = Runs(static_cast<int>(kMaxRunMarks) + 1000);
  v1::GridAxis* seed = data.sweep.mutable_spec()->add_grid();  // For the search views.
  seed->set_name("seed");
  for (RunData& r : data.runs) {
    const std::string label = std::to_string(r.run.id());
    seed->add_values()->set_label(label);
    (*r.run.mutable_labels())["seed"] = label;
    r.run.set_finished_at_ms(r.run.id());
  }
  const std::vector<Figure> figures = SweepFigures(data, "top1");
  bool parallel = false;
  for (const Figure& f : figures)
    parallel |= f.kind == Figure::Kind::kParallelCoordinates && !f.run_ids.empty();
  EXPECT_TRUE(parallel);
  size_t line_points = 0;  // Points of lines, which may name runs outside the chosen set.
  for (const Figure& f : figures) {
    EXPECT_LE(f.run_ids.size(), kMaxRunMarks) << f.id;
    for (const Series& s : f.series) {
      EXPECT_LE(s.run_ids.size(), kMaxRunMarks) << f.id << " " << s.name;
      if (s.style == Series::Style::kLines) line_points += s.run_ids.size();
    }
  }
  EXPECT_LT(line_points, 200u);  // The best-so-far line: its improvements, not its 6,000 trials.
  EXPECT_LE(FiguresDocument(figures, data)["runs"].size(), kMaxRunMarks + line_points);
}

}  // namespace
}  // namespace nmsparse::report
