#include "worker/trainer/kernels/softmax_rows.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "worker/trainer/kernels/rounding_bounds_testing.h"

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

// Each vector path (AVX2, AVX-512) against the plain one on random shapes. Both subtract the same float max,
// so they differ only by: each exp, within kExpUlps ulp (2 kExpUlps u relative) of the exact exp of the same
// argument; the sum of those exps in another order (gamma(cols) relative, all terms positive); and the
// reciprocal and the product (u each). To first order a path's p is within 2 e + gamma(cols) + 2u of
// exact (e = 2 kExpUlps u: its exp and the sum's), so two paths differ by twice that, plus FLT_MIN for exps
// that one path flushes to zero below ln(FLT_MIN).
constexpr double kExpUlps = 2;  // Cephes' expf about 1 ulp, glibc's expf below 1

std::vector<KernelIsa> VectorPaths() {
  std::vector<KernelIsa> paths;
  if (CpuKernelIsa() >= KernelIsa::kAvx2) paths.push_back(KernelIsa::kAvx2);
  if (CpuKernelIsa() >= KernelIsa::kAvx512) paths.push_back(KernelIsa::kAvx512);
  return paths;
}

const char* kNoAvx512 = "AVX-512 path not run: this CPU lacks AVX-512 F/DQ/BW/VL";

int64_t RandomCols(std::mt19937& rng) {
  return 1 + static_cast<int64_t>(rng() % 300);  // tails of every length for 8 and 16 lanes
}

TEST(SoftmaxRows, EveryPathMatchesThePlainPathWithinTheRoundingBound) {
  std::mt19937 rng(21);
  for (KernelIsa isa : VectorPaths()) {
    for (int trial = 0; trial < 60; ++trial) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 6), cols = RandomCols(rng);
      const float spread = trial % 3 == 0 ? 60.0f : 4.0f;
      auto vec = RandomRows(rows, cols, spread, rng());
      auto plain = vec;
      SoftmaxRowsInPlaceOn(isa, vec.data(), rows, cols);
      SoftmaxRowsInPlaceScalar(plain.data(), rows, cols);
      const double u = rounding::kUnitRoundoff;
      const double relative = 2 * (2 * 2 * kExpUlps * u + rounding::Gamma(cols) + 2 * u);
      for (int64_t i = 0; i < rows * cols; ++i) {
        ASSERT_LE(std::fabs(vec[i] - plain[i]), relative * plain[i] + FLT_MIN)
            << KernelIsaName(isa) << " cols " << cols << " at " << i;
      }
    }
  }
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << kNoAvx512;
}

// Backward on the same p and g: the dot products (another order, FMA or not) are each within
// gamma(cols) sum |g p| of exact, so differ by at most twice that; then g - dot, scale * p and the product
// round once each on both paths.
TEST(SoftmaxRows, EveryPathsBackwardMatchesThePlainPathWithinTheRoundingBound) {
  std::mt19937 rng(23);
  const double u = rounding::kUnitRoundoff;
  for (KernelIsa isa : VectorPaths()) {
    for (int trial = 0; trial < 60; ++trial) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 6), cols = RandomCols(rng);
      const float scale = 0.125f;
      auto p = RandomRows(rows, cols, 3.0f, rng());
      SoftmaxRowsInPlaceScalar(p.data(), rows, cols);
      const auto g0 = RandomRows(rows, cols, 1.0f, rng());
      auto vec = g0, plain = g0;
      SoftmaxBackwardRowsInPlaceOn(isa, p.data(), vec.data(), rows, cols, scale);
      SoftmaxBackwardRowsInPlaceScalar(p.data(), plain.data(), rows, cols, scale);
      for (int64_t r = 0; r < rows; ++r) {
        double dot = 0, dot_abs = 0;
        for (int64_t j = 0; j < cols; ++j) {
          dot += double{g0[r * cols + j]} * p[r * cols + j];
          dot_abs += std::fabs(double{g0[r * cols + j]} * p[r * cols + j]);
        }
        const double dot_error = 2 * rounding::Gamma(cols) * dot_abs;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t i = r * cols + j;
          const double diff = std::fabs(double{g0[i]} - dot);
          // (1 + u)^3 - 1 < 3.01 u for the three roundings after the dot product, on each path.
          const double bound = scale * p[i] * (dot_error + 2 * 3.01 * u * (diff + dot_error));
          ASSERT_LE(std::fabs(vec[i] - plain[i]), bound) << KernelIsaName(isa) << " cols " << cols;
        }
      }
    }
  }
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << kNoAvx512;
}

TEST(SoftmaxRows, NanPropagatesToItsRowOnEveryPath) {
  for (KernelIsa isa : VectorPaths()) {
    for (int64_t cols : {5, 16, 17, 50}) {
      auto x = RandomRows(2, cols, 1.0f, 5);
      x[cols - 1] = NAN;  // last value of row 0, in the tail when cols is not a multiple of the lanes
      SoftmaxRowsInPlaceOn(isa, x.data(), 2, cols);
      for (int64_t j = 0; j < cols; ++j) EXPECT_TRUE(std::isnan(x[j])) << KernelIsaName(isa) << " " << cols;
      for (int64_t j = cols; j < 2 * cols; ++j) EXPECT_FALSE(std::isnan(x[j])) << KernelIsaName(isa);
    }
  }
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << kNoAvx512;
}

}  // namespace
}  // namespace nmsparse
