#include "server/search/tpe_sampler.h"

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "schemas/limits.h"

namespace nmsparse::server {
namespace {

v1::RandomAxis Range(const std::string& key, double min, double max, bool log = false, bool integer = false) {
  v1::RandomAxis a;
  a.set_key(key);
  a.set_min(min);
  a.set_max(max);
  a.set_log(log);
  a.set_integer(integer);
  return a;
}

v1::Search Tpe(uint64_t seed, const std::string& mode = "max") {
  v1::Search s;
  s.set_algorithm("tpe");
  s.set_seed(seed);
  s.set_mode(mode);
  s.set_n_startup(5);
  s.set_gamma(0.25);
  s.set_n_candidates(24);
  return s;
}

// Runs `n` proposals in a row, each scored by `objective` before the next, as a sweep with parallel 1 does.
template <typename Objective>
std::vector<TpeResult> Drive(const TpeSampler& sampler, int n, Objective objective) {
  std::vector<TpeResult> results;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<std::vector<std::string>> x = sampler.Propose(i, results);
    EXPECT_TRUE(x.ok()) << x.status();
    if (!x.ok()) break;
    results.push_back({*x, objective(*x)});
  }
  return results;
}

double Quadratic(const std::vector<std::string>& x) {
  const double v = std::stod(x[0]);
  return -(v - 7) * (v - 7);
}

TEST(TpeSamplerTest, SameSeedAndResultsGiveTheSameProposals) {
  const TpeSampler a({Range("optimizer.lr", 1e-4, 1e-1, /*log=*/true), Range("x", 0, 10)}, Tpe(3));
  const TpeSampler b({Range("optimizer.lr", 1e-4, 1e-1, /*log=*/true), Range("x", 0, 10)}, Tpe(3));
  auto objective = [](const std::vector<std::string>& x) {
    return -std::abs(std::log10(std::stod(x[0])) + 2);
  };
  const std::vector<TpeResult> ra = Drive(a, 12, objective);
  const std::vector<TpeResult> rb = Drive(b, 12, objective);
  ASSERT_EQ(ra.size(), 12u);
  for (size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].values, rb[i].values) << i;
  // A proposal depends on its index and the results given, not on earlier calls.
  const std::vector<TpeResult> history(ra.begin(), ra.begin() + 8);
  EXPECT_EQ(*a.Propose(8, history), ra[8].values);
  EXPECT_EQ(*b.Propose(8, history), *a.Propose(8, history));
  // Another seed proposes otherwise.
  const TpeSampler c({Range("optimizer.lr", 1e-4, 1e-1, true), Range("x", 0, 10)}, Tpe(4));
  EXPECT_NE(*c.Propose(0, {}), *a.Propose(0, {}));
}

// On [0, 10] with f(x) = -(x - 7)^2, uniform draws lie 2.9 from the optimum on average ((7^2 + 3^2) / 20).
// After 5 uniform start-up draws, TPE's proposals 16-30 concentrate near 7.
TEST(TpeSamplerTest, ProposalsConcentrateNearTheOptimumOfAQuadratic) {
  for (uint64_t seed : {1, 2, 3}) {
    const TpeSampler sampler({Range("x", 0, 10)}, Tpe(seed));
    const std::vector<TpeResult> results = Drive(sampler, 30, Quadratic);
    double distance = 0;
    for (size_t i = 15; i < results.size(); ++i) distance += std::abs(std::stod(results[i].values[0]) - 7);
    distance /= 15;
    EXPECT_LT(distance, 1.45) << "seed " << seed << ": half the uniform average";
  }
}

TEST(TpeSamplerTest, MinModeAndIntegerAndCategoricalAxes) {
  v1::RandomAxis recipe;
  recipe.set_key("sparsity.recipe");
  for (const char* c : {"SRSTE", "MDGF", "DENSE"}) recipe.add_choices(c);
  const TpeSampler sampler({Range("schedule.epochs", 1, 8, false, /*integer=*/true), recipe}, Tpe(5, "min"));
  // Loss: smallest for MDGF with 3 epochs.
  auto loss = [](const std::vector<std::string>& x) {
    return std::abs(std::stoi(x[0]) - 3) + (x[1] == "MDGF" ? 0.0 : 2.0);
  };
  const std::vector<TpeResult> results = Drive(sampler, 30, loss);
  int mdgf = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const int epochs = std::stoi(results[i].values[0]);
    EXPECT_GE(epochs, 1);
    EXPECT_LE(epochs, 8);
    if (i >= 15) mdgf += results[i].values[1] == "MDGF";
  }
  EXPECT_GE(mdgf, 10) << "uniform choices would give about 5 of 15";
}

TEST(TpeSamplerTest, ValueOutsideTheAxisIsRefused) {
  v1::RandomAxis recipe;
  recipe.set_key("sparsity.recipe");
  recipe.add_choices("SRSTE");
  const TpeSampler sampler({recipe}, Tpe(1));
  absl::StatusOr<std::vector<std::string>> x = sampler.Propose(1, {{{"STE"}, 0.5}});
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().message(), "sparsity.recipe: value 'STE' is not one of its choices");
}

// Issue 22: n_candidates 4,000,000,000 (stored by an older coordinator) ranked every candidate and held a
// core for minutes. Past limits::kMaxSearchCandidates the proposal is the one limits::kMaxSearchCandidates
// candidates give.
TEST(TpeSamplerTest, CandidatesPastTheCapCostNothingMore) {
  v1::Search huge = Tpe(9);
  huge.set_n_startup(1);
  huge.set_n_candidates(4'000'000'000u);
  v1::Search capped = huge;
  capped.set_n_candidates(limits::kMaxSearchCandidates);
  const std::vector<v1::RandomAxis> axes = {Range("optimizer.lr", 1e-4, 1e-1, true), Range("x", 0, 10)};
  const std::vector<TpeResult> results = {{{"0.001", "3"}, 0.5}, {{"0.01", "6"}, 0.7}};
  absl::StatusOr<std::vector<std::string>> a = TpeSampler(axes, huge).Propose(2, results);
  absl::StatusOr<std::vector<std::string>> b = TpeSampler(axes, capped).Propose(2, results);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

// A retry of a proposal (attempt > 0) draws another point, the same one each time; attempt 0 is the
// proposal as it was before retries existed.
TEST(TpeSamplerTest, AttemptsDrawOtherPointsReproducibly) {
  const TpeSampler sampler({Range("x", 0, 10)}, Tpe(2));
  const std::vector<TpeResult> results = Drive(sampler, 8, Quadratic);
  for (const std::vector<TpeResult>& known : {std::vector<TpeResult>{}, results}) {
    const uint64_t index = known.size();
    EXPECT_EQ(*sampler.Propose(index, known, 0), *sampler.Propose(index, known));
    EXPECT_NE(*sampler.Propose(index, known, 1), *sampler.Propose(index, known, 0));
    EXPECT_NE(*sampler.Propose(index, known, 2), *sampler.Propose(index, known, 1));
    EXPECT_EQ(*sampler.Propose(index, known, 2), *sampler.Propose(index, known, 2));
  }
}

TEST(TpeSamplerTest, GoodCountIsACeilingFractionFromOneToTwentyFive) {
  EXPECT_EQ(GoodCount(0.25, 1), 1u);
  EXPECT_EQ(GoodCount(0.25, 8), 2u);
  EXPECT_EQ(GoodCount(0.25, 9), 3u);
  EXPECT_EQ(GoodCount(0.1, 30), 3u);
  EXPECT_EQ(GoodCount(0.1, 31), 4u);
  EXPECT_EQ(GoodCount(0.25, 1000), 25u);
}

// Branin's regret on x1 in [-5, 10], x2 in [0, 15] (global minimum 0.397887).
double BraninRegret(const std::vector<std::string>& x) {
  const double x1 = std::stod(x[0]), x2 = std::stod(x[1]);
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) + 10 * (1 - t) * std::cos(x1) + 10 - 0.397887357729738;
}

// Issue 27: one Scott's-rule bandwidth per density with a 0.05 floor sent 68-81% of proposals 10-29 within
// 0.05 (unit square) of the best point so far; Optuna's TPE, at most 8%. Here, over 20 seeds x 20 proposals
// (400, default settings, parallel 1), the old estimator sends 327 (0.82) and this one 96 (0.24). The bound
// 0.40 lies 7 binomial standard deviations above 0.24 (sd = sqrt(0.24 * 0.76 / 400) = 0.021) and 20 below
// 0.82 (sd 0.019), so it tells the two apart whatever the seeds, and leaves room for a search that rightly
// refines near its best point.
TEST(TpeSamplerTest, ProposalsDoNotCollapseOntoTheBestPoint) {
  int near = 0, proposals = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    v1::Search search = Tpe(seed);
    search.set_n_startup(3);
    const TpeSampler sampler({Range("x1", -5, 10), Range("x2", 0, 15)}, search);
    std::vector<TpeResult> results;
    double best_regret = INFINITY, best_u1 = 0, best_u2 = 0;
    for (int i = 0; i < 30; ++i) {
      absl::StatusOr<std::vector<std::string>> x = sampler.Propose(i, results);
      ASSERT_TRUE(x.ok()) << x.status();
      const double u1 = (std::stod((*x)[0]) + 5) / 15, u2 = std::stod((*x)[1]) / 15;
      if (i >= 10) {
        ++proposals;
        near += std::hypot(u1 - best_u1, u2 - best_u2) <= 0.05;
      }
      const double regret = BraninRegret(*x);
      results.push_back({*x, 1 / (1 + regret)});
      if (regret < best_regret) std::tie(best_regret, best_u1, best_u2) = std::make_tuple(regret, u1, u2);
    }
  }
  EXPECT_LT(static_cast<double>(near) / proposals, 0.40) << near << " of " << proposals;
}

TEST(TpeSamplerTest, ExtremeAndMiddleValuesOfEachKindOfAxis) {
  EXPECT_EQ(ExtremeValues(Range("schedule.warmup_epochs", 0, 15)), (std::vector<std::string>{"0", "15"}));
  EXPECT_EQ(MiddleValue(Range("schedule.warmup_epochs", 0, 15)), "7.5");
  EXPECT_EQ(ExtremeValues(Range("optimizer.lr", 1e-4, 1e-2, /*log=*/true)),
            (std::vector<std::string>{"0.0001", "0.01"}));
  EXPECT_EQ(MiddleValue(Range("optimizer.lr", 1e-4, 1e-2, /*log=*/true)), "0.001");
  EXPECT_EQ(ExtremeValues(Range("schedule.epochs", 1.5, 8, false, /*integer=*/true)),
            (std::vector<std::string>{"2", "8"}));
  EXPECT_EQ(ExtremeValues(Range("schedule.epochs", 3, 3, false, true)), (std::vector<std::string>{"3"}));
  v1::RandomAxis recipe;
  recipe.set_key("sparsity.recipe");
  for (const char* c : {"SRSTE", "MDGF", "DENSE"}) recipe.add_choices(c);
  EXPECT_EQ(ExtremeValues(recipe), (std::vector<std::string>{"SRSTE", "MDGF", "DENSE"}));
  EXPECT_EQ(MiddleValue(recipe), "SRSTE");
}

}  // namespace
}  // namespace nmsparse::server
