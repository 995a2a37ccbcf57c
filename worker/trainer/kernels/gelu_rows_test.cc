// Each vector path of the GELU loops (AVX2, AVX-512) against the portable one and against exact GELU in
// double precision, on random shapes whose row lengths leave tails of every size for 8 and 16 lanes.
#include "worker/trainer/kernels/gelu_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace nmsparse {
namespace {

// Error bounds per element against exact GELU, as fused_gelu_test.cc holds the vector code to: A&S 7.1.26's
// 1.5e-7 on erf (Phi: 0.75e-7, times |x| <= 12 in training), and some ten float operations after it (a few
// ulp of the result). The plain path (std::erf in float) stays inside the same bound. Two paths that each
// stay within a bound of the exact value differ by at most twice it.
double ForwardBound(double exact) { return 5e-7 + 1e-6 * std::fabs(exact); }
double GradientBound(double exact) { return 1e-6 + 1e-6 * std::fabs(exact); }

double ExactGelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ExactGeluGrad(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

std::vector<float> Random(int64_t n, float spread, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// The vector paths this CPU has; the test says which it could not run.
std::vector<GeluPath> VectorPaths() {
  std::vector<GeluPath> paths;
  if (BestGeluPath() >= GeluPath::kAvx2) paths.push_back(GeluPath::kAvx2);
  if (BestGeluPath() >= GeluPath::kAvx512) paths.push_back(GeluPath::kAvx512);
  return paths;
}

// Row lengths: below, at and around 8 and 16 lanes, the micro ViT's hidden width (256) and odd widths.
const int64_t kCols[] = {1, 5, 8, 15, 16, 17, 31, 33, 50, 100, 256, 257};

TEST(GeluRows, EveryPathMatchesExactGeluAndThePortablePath) {
  std::mt19937 rng(7);
  for (GeluPath path : VectorPaths()) {
    for (int64_t cols : kCols) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 5);
      const std::vector<float> h0 = Random(rows * cols, 3.0f, rng), bias = Random(cols, 1.0f, rng);
      std::vector<float> h = h0, y(h.size()), h_plain = h0, y_plain(h.size());
      BiasGeluRowsOn(path, h.data(), bias.data(), y.data(), rows, cols);
      BiasGeluRowsOn(GeluPath::kScalar, h_plain.data(), bias.data(), y_plain.data(), rows, cols);
      for (int64_t i = 0; i < rows * cols; ++i) {
        ASSERT_EQ(h[i], h_plain[i]);  // One float addition each: the same on every path.
        const double exact = ExactGelu(h[i]);
        ASSERT_LE(std::fabs(y[i] - exact), ForwardBound(exact)) << GeluPathName(path) << " cols " << cols;
        ASSERT_LE(std::fabs(y[i] - y_plain[i]), 2 * ForwardBound(exact))
            << GeluPathName(path) << " x " << h[i];
      }
    }
  }
  if (BestGeluPath() < GeluPath::kAvx512)
    GTEST_SKIP() << "AVX-512 path not run: this CPU lacks it, or NMSPARSE_KERNELS_MAX_ISA caps it";
}

TEST(GeluRows, EveryPathsBackwardAndBiasGradientMatchThePortablePath) {
  std::mt19937 rng(11);
  for (GeluPath path : VectorPaths()) {
    for (int64_t cols : kCols) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 6);
      const std::vector<float> h = Random(rows * cols, 3.0f, rng), grad0 = Random(rows * cols, 1.0f, rng);
      std::vector<float> grad = grad0, grad_plain = grad0, bias_grad(cols, 0.5f), bias_grad_plain(cols, 0.5f);
      GeluBackwardRowsWithBiasGradOn(path, h.data(), grad.data(), bias_grad.data(), rows, cols);
      GeluBackwardRowsWithBiasGradOn(GeluPath::kScalar, h.data(), grad_plain.data(), bias_grad_plain.data(),
                                     rows, cols);
      for (int64_t j = 0; j < cols; ++j) {
        // Both sum the same rows in the same order, each term within |g| GradientBound of exact: the sums
        // differ by at most twice the sum of those, plus float rounding of the rows additions on both sides.
        double bound = 0.0, magnitude = 0.5;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = r * cols + j;
          const double exact = ExactGeluGrad(h[i]);
          const double exact_term = grad0[i] * exact;
          ASSERT_LE(std::fabs(grad[i] - exact_term), std::fabs(grad0[i]) * GradientBound(exact) + 1e-7)
              << GeluPathName(path) << " x " << h[i];
          bound += 2 * (std::fabs(grad0[i]) * GradientBound(exact) + 1e-7);
          magnitude += std::fabs(exact_term);
        }
        bound += 2 * rows * 0x1p-24 * magnitude;
        ASSERT_LE(std::fabs(bias_grad[j] - bias_grad_plain[j]), bound)
            << GeluPathName(path) << " cols " << cols;
      }
    }
  }
  if (BestGeluPath() < GeluPath::kAvx512)
    GTEST_SKIP() << "AVX-512 path not run: this CPU lacks it, or NMSPARSE_KERNELS_MAX_ISA caps it";
}

TEST(GeluRows, FlatForwardAndBackwardWithEveryTail) {
  std::mt19937 rng(13);
  for (GeluPath path : VectorPaths()) {
    for (int64_t n = 1; n <= 40; ++n) {
      const std::vector<float> x = Random(n, 4.0f, rng), g = Random(n, 1.0f, rng);
      std::vector<float> y(n), out(n);
      GeluForwardOn(path, x.data(), y.data(), n);
      GeluBackwardOn(path, x.data(), g.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double exact = ExactGelu(x[i]), exact_grad = ExactGeluGrad(x[i]);
        ASSERT_LE(std::fabs(y[i] - exact), ForwardBound(exact)) << GeluPathName(path) << " n " << n;
        ASSERT_LE(std::fabs(out[i] - g[i] * exact_grad), std::fabs(g[i]) * GradientBound(exact_grad) + 1e-7)
            << GeluPathName(path) << " n " << n;
      }
    }
  }
  if (BestGeluPath() < GeluPath::kAvx512)
    GTEST_SKIP() << "AVX-512 path not run: this CPU lacks it, or NMSPARSE_KERNELS_MAX_ISA caps it";
}

}  // namespace
}  // namespace nmsparse
