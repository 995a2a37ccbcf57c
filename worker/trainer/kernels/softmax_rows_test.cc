#include "worker/trainer/kernels/softmax_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace nmsparse {
namespace {

std::vector<float> RandomRows(int64_t rows, int64_t cols, float spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> x(rows * cols);
  for (auto& v : x) v = dist(rng);
  return x;
}

std::vector<double> ReferenceSoftmax(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j) max = std::max(max, static_cast<double>(x[r * cols + j]));
    for (int64_t j = 0; j < cols; ++j) sum += (y[r * cols + j] = std::exp(x[r * cols + j] - max));
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] /= sum;
  }
  return y;
}

// Row lengths around the 8-lane vector width and the token counts of the models (50, 65, 197).
const int64_t kCols[] = {1, 3, 7, 8, 9, 16, 50, 65, 197};

TEST(SoftmaxRows, MatchesDoublePrecisionReferenceForEveryRowLength) {
  for (float spread : {1.0f, 10.0f, 60.0f}) {
    for (int64_t cols : kCols) {
      const int64_t rows = 5;
      auto x = RandomRows(rows, cols, spread, static_cast<unsigned>(cols));
      const auto expected = ReferenceSoftmax(x, rows, cols);
      SoftmaxRowsInPlace(x.data(), rows, cols);
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t i = r * cols + j;
          EXPECT_NEAR(x[i], expected[i], 2e-7 + 2e-6 * expected[i])
              << "cols " << cols << " spread " << spread;
          sum += x[i];
        }
        EXPECT_NEAR(sum, 1.0, 1e-5) << "cols " << cols;
      }
    }
  }
}

TEST(SoftmaxRows, ExtremeRowsStayFinite) {
  std::vector<float> x = {1e30f, 0.0f, -1e30f, 5.0f, 5.0f, 5.0f, 5.0f, 5.0f, 5.0f, -200.0f, 0.0f};
  // Row 0: one dominant value; row 1 (6 equal values); row 2: a value far below the other.
  std::vector<float> row0(x.begin(), x.begin() + 3), row1(x.begin() + 3, x.begin() + 9),
      row2(x.begin() + 9, x.end());
  SoftmaxRowsInPlace(row0.data(), 1, 3);
  SoftmaxRowsInPlace(row1.data(), 1, 6);
  SoftmaxRowsInPlace(row2.data(), 1, 2);
  EXPECT_FLOAT_EQ(row0[0], 1.0f);
  EXPECT_FLOAT_EQ(row0[1], 0.0f);
  EXPECT_FLOAT_EQ(row0[2], 0.0f);
  for (float v : row1) EXPECT_NEAR(v, 1.0f / 6, 1e-7);
  EXPECT_LT(row2[0], 1e-30f);
  EXPECT_FLOAT_EQ(row2[1], 1.0f);
}

TEST(SoftmaxRows, NanPropagatesToItsRow) {
  for (int64_t cols : {5, 8, 50}) {
    auto x = RandomRows(2, cols, 1.0f, 5);
    x[cols - 1] = NAN;  // last value of row 0 (in the masked tail when cols % 8 != 0)
    SoftmaxRowsInPlace(x.data(), 2, cols);
    for (int64_t j = 0; j < cols; ++j) EXPECT_TRUE(std::isnan(x[j])) << "cols " << cols << " j " << j;
    for (int64_t j = cols; j < 2 * cols; ++j) EXPECT_FALSE(std::isnan(x[j])) << "cols " << cols;
  }
}

TEST(SoftmaxRows, BackwardMatchesDoublePrecisionReference) {
  for (int64_t cols : kCols) {
    const int64_t rows = 4;
    const float scale = 0.25f;
    auto p = RandomRows(rows, cols, 3.0f, 7);
    SoftmaxRowsInPlaceScalar(p.data(), rows, cols);
    auto g = RandomRows(rows, cols, 1.0f, 11);
    std::vector<double> expected(g.size());
    for (int64_t r = 0; r < rows; ++r) {
      double dot = 0;
      for (int64_t j = 0; j < cols; ++j) dot += double{g[r * cols + j]} * p[r * cols + j];
      for (int64_t j = 0; j < cols; ++j) {
        expected[r * cols + j] = scale * double{p[r * cols + j]} * (g[r * cols + j] - dot);
      }
    }
    SoftmaxBackwardRowsInPlace(p.data(), g.data(), rows, cols, scale);
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], expected[i], 1e-6) << "cols " << cols;
  }
}

TEST(SoftmaxRows, VectorisedAndScalarAgree) {
  const int64_t rows = 3, cols = 50;
  auto a = RandomRows(rows, cols, 8.0f, 3);
  auto b = a;
  SoftmaxRowsInPlace(a.data(), rows, cols);
  SoftmaxRowsInPlaceScalar(b.data(), rows, cols);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f + 1e-6f * b[i]);
  if (!SoftmaxRowsVectorised()) GTEST_SKIP() << "no AVX2 + FMA on this CPU: only the scalar code ran";
}

}  // namespace
}  // namespace nmsparse
