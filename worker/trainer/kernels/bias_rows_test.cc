// Each vector path of the Mlp's bias loops (AVX2, AVX-512) against the plain one on random shapes with
// tails of every length: one float addition per value in the same order on every path, so the same bits.
#include "worker/trainer/kernels/bias_rows.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace nmsparse {
namespace {

std::vector<float> Random(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

TEST(BiasRows, EveryPathGivesThePlainPathsBits) {
  std::mt19937 rng(17);
  std::vector<KernelIsa> paths;
  for (KernelIsa isa : {KernelIsa::kAvx2, KernelIsa::kAvx512}) {
    if (CpuKernelIsa() >= isa) paths.push_back(isa);
  }
  for (KernelIsa isa : paths) {
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t rows = 1 + static_cast<int64_t>(rng() % 7), cols = 1 + static_cast<int64_t>(rng() % 200);
      const std::vector<float> y0 = Random(rows * cols, rng), bias = Random(cols, rng);
      // One spare value past each buffer: never written.
      std::vector<float> y = y0, y_plain = y0, sums = Random(cols, rng);
      std::vector<float> sums_plain = sums;
      y.push_back(7.0f), y_plain.push_back(7.0f), sums.push_back(7.0f), sums_plain.push_back(7.0f);
      AddBiasRowsOn(isa, y.data(), bias.data(), rows, cols);
      AddBiasRowsOn(KernelIsa::kScalar, y_plain.data(), bias.data(), rows, cols);
      AddColumnSumsOn(isa, y0.data(), sums.data(), rows, cols);
      AddColumnSumsOn(KernelIsa::kScalar, y0.data(), sums_plain.data(), rows, cols);
      ASSERT_EQ(y, y_plain) << KernelIsaName(isa) << " [" << rows << ", " << cols << "]";
      ASSERT_EQ(sums, sums_plain) << KernelIsaName(isa) << " [" << rows << ", " << cols << "]";
    }
  }
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << "AVX-512 path not run: this CPU lacks AVX-512";
}

}  // namespace
}  // namespace nmsparse
