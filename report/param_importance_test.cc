// FanovaImportances against Optuna's FanovaImportanceEvaluator on the same trials
// (report/testdata/optuna_importances.txt, from tools/optuna_importance_golden.py).
#include "report/param_importance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace nmsparse::report {
namespace {

struct GoldenFunction {
  std::string name;
  std::vector<std::string> params;
  ImportanceInput input;
  std::vector<double> optuna;
};

std::vector<GoldenFunction> ReadGolden() {
  std::ifstream in("report/testdata/optuna_importances.txt");
  std::vector<GoldenFunction> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word == "function") {
      out.emplace_back();
      words >> out.back().name;
    } else if (word == "param") {
      std::pair<double, double> range;
      out.back().params.emplace_back();
      words >> out.back().params.back() >> range.first >> range.second;
      out.back().input.bounds.push_back(range);
    } else if (word == "trial") {
      std::vector<double> row(out.back().params.size());
      for (double& v : row) words >> v;
      double y = 0;
      words >> y;
      out.back().input.rows.push_back(row);
      out.back().input.objective.push_back(y);
    } else if (word == "importance") {
      double v = 0;
      words >> word >> v;
      out.back().optuna.push_back(v);
    }
  }
  return out;
}

std::vector<size_t> Order(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  return order;
}

// Both sides average 64 trees grown on bootstrap samples; they differ in the draws (numpy's against
// std::mt19937_64) and in how ties between equal splits break, so they agree only up to the forest's spread.
// Over seeds 0-19 of our forest on these trials, no importance moved by more than 0.02 from its mean (see
// SeedSpreadIsSmall), so 0.03 holds against any one draw of Optuna's forest without hiding a wrong method: a
// marginal taken over the data instead of the bounds, or a missing normalisation, moves them by >= 0.05.
constexpr double kTolerance = 0.03;

TEST(ParamImportanceTest, MatchesOptunaOrderAndValues) {
  const std::vector<GoldenFunction> golden = ReadGolden();
  ASSERT_EQ(golden.size(), 3u) << "report/testdata/optuna_importances.txt not read";
  for (const GoldenFunction& f : golden) {
    ASSERT_EQ(f.input.rows.size(), 120u) << f.name;
    const std::vector<double> ours = FanovaImportances(f.input);
    ASSERT_EQ(ours.size(), f.optuna.size()) << f.name;
    EXPECT_EQ(Order(ours), Order(f.optuna)) << f.name;
    EXPECT_NEAR(std::accumulate(ours.begin(), ours.end(), 0.0), 1.0, 1e-9) << f.name;
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_NEAR(ours[i], f.optuna[i], kTolerance) << f.name << " " << f.params[i];
    }
  }
}

TEST(ParamImportanceTest, SeedSpreadIsSmall) {
  for (const GoldenFunction& f : ReadGolden()) {
    std::vector<std::vector<double>> runs;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      ForestSettings settings;
      settings.seed = seed;
      runs.push_back(FanovaImportances(f.input, settings));
    }
    for (size_t i = 0; i < f.params.size(); ++i) {
      double mean = 0;
      for (const auto& r : runs) mean += r[i] / runs.size();
      for (const auto& r : runs) EXPECT_NEAR(r[i], mean, 0.02) << f.name << " " << f.params[i];
    }
  }
}

TEST(ParamImportanceTest, DeterministicGivenTheRuns) {
  const GoldenFunction f = ReadGolden().at(1);
  EXPECT_EQ(FanovaImportances(f.input), FanovaImportances(f.input));
}

// Past max_trials the forest learns from a seeded random sample of the trials (in trial order): exactly what
// it gives on that sample by hand. Not an evenly spaced one: in a grid's nested order that aliases, and a
// sweep of 25 values of `a` per value of `b` would then see `a` constant.
TEST(ParamImportanceTest, ManyTrialsAreThinnedAtRandom) {
  const GoldenFunction f = ReadGolden().at(0);
  ForestSettings settings;
  settings.max_trials = 30;
  ImportanceInput sample;
  sample.bounds = f.input.bounds;
  const std::vector<size_t> kept = ThinnedTrials(f.input.rows.size(), 30, settings.seed);
  ASSERT_EQ(kept.size(), 30u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  for (size_t i : kept) {
    sample.rows.push_back(f.input.rows[i]);
    sample.objective.push_back(f.input.objective[i]);
  }
  EXPECT_EQ(FanovaImportances(f.input, settings), FanovaImportances(sample, ForestSettings{}));

  ImportanceInput grid;  // 25 values of a (which sets the objective) for each of 400 values of b.
  grid.bounds = {{0, 24}, {0, 399}};
  for (int i = 0; i < 10000; ++i) {
    grid.rows.push_back({static_cast<double>(i % 25), static_cast<double>(i / 25)});
    grid.objective.push_back((i % 25 - 12.0) * (i % 25 - 12.0));
  }
  ForestSettings thin;
  thin.trees = 8;
  thin.max_trials = 400;  // A stride of 25: evenly spaced, every kept trial would have a = 0.
  const std::vector<double> v = FanovaImportances(grid, thin);
  EXPECT_GT(v[0], 0.9);
}

TEST(ParamImportanceTest, ConstantObjectiveOrTooFewRowsGiveZeros) {
  ImportanceInput constant{{{0, 1}, {1, 0}, {0.5, 0.5}}, {2, 2, 2}, {{0, 1}, {0, 1}}};
  EXPECT_EQ(FanovaImportances(constant), std::vector<double>({0, 0}));
  ImportanceInput one{{{0.3}}, {1}, {{0, 1}}};
  EXPECT_EQ(FanovaImportances(one), std::vector<double>({0}));
}

TEST(ParamImportanceTest, CategoricalIndexAlone) {
  // A categorical parameter (indices 0..2 over [-0.5, 2.5]) that sets the objective, and a float that does
  // not.
  ImportanceInput in;
  in.bounds = {{-0.5, 2.5}, {0, 1}};
  for (int i = 0; i < 30; ++i) {
    const double category = i % 3, x = (i * 7 % 30) / 30.0;
    in.rows.push_back({category, x});
    in.objective.push_back(category == 1 ? 5.0 : 0.0);
  }
  const std::vector<double> v = FanovaImportances(in);
  EXPECT_GT(v[0], 0.95);
  EXPECT_LT(v[1], 0.05);
}

}  // namespace
}  // namespace nmsparse::report
