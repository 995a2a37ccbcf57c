#include "server/search/parzen_estimator.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace nmsparse::server {
namespace {

// Sorted 0.1, 0.2, 0.5, 0.9: the inner points take their larger gap (0.3, 0.4), the lowest and the highest
// their inner gap (0.1, 0.4); 5 kernels with the prior clip at 1 / min(100, 1 + 5) = 1/6, which lifts 0.1.
TEST(ParzenEstimatorTest, BandwidthPerPointFromItsNeighbours) {
  const std::vector<double> sigmas = ParzenBandwidths({0.9, 0.1, 0.5, 0.2});
  ASSERT_EQ(sigmas.size(), 4u);
  EXPECT_DOUBLE_EQ(sigmas[0], 0.4);
  EXPECT_DOUBLE_EQ(sigmas[1], 1.0 / 6);
  EXPECT_DOUBLE_EQ(sigmas[2], 0.4);
  EXPECT_NEAR(sigmas[3], 0.3, 1e-15);
  // A lone point reaches the farther end.
  EXPECT_EQ(ParzenBandwidths({0.3}), std::vector<double>{0.7});
  // Coincident points are held at the clip: 1 / (1 + 4 kernels) for 3, 1/100 past 98.
  EXPECT_EQ(ParzenBandwidths({0.5, 0.5, 0.5}), std::vector<double>(3, 0.2));
  EXPECT_EQ(ParzenBandwidths(std::vector<double>(200, 0.5)), std::vector<double>(200, 0.01));
}

TEST(ParzenEstimatorTest, OldPointsWeighLessPastTwentyFive) {
  EXPECT_EQ(ParzenWeights(0), std::vector<double>{1.0});
  EXPECT_EQ(ParzenWeights(3), std::vector<double>(4, 0.25));
  // 27 points: the 2 oldest ramp from 1/27 to 1, the 25 latest and the prior weigh 1.
  const std::vector<double> w = ParzenWeights(27);
  const double total = 1.0 / 27 + 1 + 25 + 1;
  ASSERT_EQ(w.size(), 28u);
  EXPECT_DOUBLE_EQ(w[0], (1.0 / 27) / total);
  EXPECT_DOUBLE_EQ(w[1], 1 / total);
  EXPECT_DOUBLE_EQ(w[27], 1 / total);
}

// Choices 0, 0, 2 of 3: 4 kernels, each point's puts 1 + 1/4 on its choice and 1/4 on each (total 1.75);
// the prior's is uniform; the kernels weigh 1/4 each.
TEST(ParzenEstimatorTest, CategoricalKernelsAndPrior) {
  const ParzenEstimator e({3}, {{0}, {0}, {2}});
  const double c0 = (2 * 1.25 / 1.75 + 0.25 / 1.75 + 1.0 / 3) / 4;
  const double c1 = (3 * 0.25 / 1.75 + 1.0 / 3) / 4;
  const double c2 = (2 * 0.25 / 1.75 + 1.25 / 1.75 + 1.0 / 3) / 4;
  EXPECT_NEAR(std::exp(e.LogPdf({0})), c0, 1e-12);
  EXPECT_NEAR(std::exp(e.LogPdf({1})), c1, 1e-12);
  EXPECT_NEAR(std::exp(e.LogPdf({2})), c2, 1e-12);
  EXPECT_NEAR(c0 + c1 + c2, 1.0, 1e-12);
}

// The truncated kernels make a density on [0, 1]: the midpoint rule over 10^4 cells is exact to ~1e-8 for
// these smooth kernels (narrowest 1/6).
TEST(ParzenEstimatorTest, RangeDensityIntegratesToOne) {
  const ParzenEstimator e({0}, {{0.9}, {0.1}, {0.5}, {0.2}});
  double integral = 0;
  constexpr int kCells = 10000;
  for (int i = 0; i < kCells; ++i) integral += std::exp(e.LogPdf({(i + 0.5) / kCells})) / kCells;
  EXPECT_NEAR(integral, 1.0, 1e-6);
}

TEST(ParzenEstimatorTest, DrawsDependOnlyOnTheSeed) {
  const ParzenEstimator e({0, 4}, {{0.2, 1}, {0.7, 3}});
  std::mt19937_64 a(7), b(7), c(8);
  std::vector<std::vector<double>> da, db, dc;
  for (int i = 0; i < 50; ++i) {
    da.push_back(e.Sample(a));
    db.push_back(e.Sample(b));
    dc.push_back(e.Sample(c));
    EXPECT_GE(da.back()[0], 0.0);
    EXPECT_LE(da.back()[0], 1.0);
    EXPECT_TRUE(da.back()[1] >= 0 && da.back()[1] <= 3);
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

}  // namespace
}  // namespace nmsparse::server
