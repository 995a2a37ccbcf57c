// The vector N:M selection (AVX2, AVX-512) against nm_select's per-group definition, and W~ through every
// path against the weight times the mask. Selection is integer comparisons of magnitude bits and W~ one
// float product per weight, so every path must give the same bits: the tests compare exactly.
#include "worker/sparsity/nm_select_vector.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "worker/sparsity/nm_group_select.h"
#include "worker/sparsity/nm_mask.h"

namespace nmsparse {
namespace {

// The vector paths this CPU runs.
std::vector<KernelIsa> VectorPaths() {
  std::vector<KernelIsa> paths;
  if (CpuKernelIsa() >= KernelIsa::kAvx2) paths.push_back(KernelIsa::kAvx2);
  if (CpuKernelIsa() >= KernelIsa::kAvx512) paths.push_back(KernelIsa::kAvx512);
  return paths;
}

const char* kNoAvx512 = "AVX-512 path not run: this CPU lacks AVX-512 F/DQ/BW/VL";

// Small integers of both signs, signed zeros, and now and then infinity or NaN: many ties in every group.
std::vector<float> TieHeavyValues(int64_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(-4, 4);
  std::vector<float> v(count);
  for (auto& x : v) {
    const int k = pick(rng);
    x = k == 4 && rng() % 8 == 0 ? (rng() % 2 ? INFINITY : NAN) : static_cast<float>(k);
    if (x == 0.0f && rng() % 2) x = -0.0f;
  }
  return v;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

TEST(NMSelectVector, EveryPathKeepsWhatTheDefinitionKeeps) {
  std::mt19937 rng(3);
  for (KernelIsa isa : VectorPaths()) {
    for (int m : {4, 8, 16}) {
      for (int n = 1; n < m; ++n) {
        for (int64_t groups : {1, 2, 3, 5, 7, 9, 33}) {  // value counts that leave tails for 8 and 16 lanes
          const int64_t count = groups * m;
          const std::vector<float> src = TieHeavyValues(count, rng);
          std::vector<float> mask(count + 16, 7.0f), product(count + 16, 7.0f);  // 7: never written
          const bool ran = SelectGroupsOnLanes(isa, src.data(), mask.data(), count, n, m, 0.25f, false);
          ASSERT_EQ(ran, m <= (isa == KernelIsa::kAvx512 ? 16 : 8)) << KernelIsaName(isa) << " m " << m;
          if (!ran) continue;
          ASSERT_TRUE(SelectGroupsOnLanes(isa, src.data(), product.data(), count, n, m, 0.25f, true));
          for (int64_t g = 0; g < groups; ++g) {
            int32_t bits[16];
            for (int i = 0; i < m; ++i) bits[i] = nm_select::MagnitudeBits(src[g * m + i]);
            for (int i = 0; i < m; ++i) {
              const int64_t at = g * m + i;
              const float expected = nm_select::KeptByRank(bits, m, n, i) ? 1.0f : 0.25f;
              ASSERT_EQ(mask[at], expected) << KernelIsaName(isa) << " " << n << ":" << m << " at " << at;
              ASSERT_TRUE(SameBits(product[at], src[at] * expected)) << KernelIsaName(isa) << " at " << at;
            }
          }
          for (int64_t i = count; i < count + 16; ++i) ASSERT_EQ(mask[i], 7.0f) << "wrote past the end";
          for (int64_t i = count; i < count + 16; ++i) ASSERT_EQ(product[i], 7.0f) << "wrote past the end";
        }
      }
    }
  }
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << kNoAvx512;
}

// W~ on every path (plain C++ included, by capping the path) is the weight times NMMask's mask, for every
// layout, for the N:M the recipes use and for group sizes that only the plain paths handle.
TEST(NMSelectVector, SparseWeightOnEveryPathIsTheWeightTimesTheMask) {
  torch::manual_seed(5);
  std::vector<KernelIsa> paths = VectorPaths();
  paths.insert(paths.begin(), KernelIsa::kScalar);
  for (KernelIsa isa : paths) {
    SetKernelIsaCap(isa);
    for (NM nm : std::vector<NM>{{2, 4}, {1, 8}, {4, 8}, {7, 8}, {3, 16}, {8, 32}}) {
      for (const torch::Tensor& w :
           {torch::randn({48, 96}), torch::randint(-2, 3, {48, 96}).to(torch::kFloat)}) {
        for (SparseDim dim : {SparseDim::kRow, SparseDim::kCol}) {
          const torch::Tensor mask = NMMask(w, nm, dim, false, 0.5f);
          torch::Tensor sparse = torch::empty_like(w);
          FillNMSparseWeight(w, nm, dim, false, 0.5f, sparse);
          EXPECT_TRUE(torch::equal(sparse, w * mask)) << KernelIsaName(isa) << " " << nm.n << ":" << nm.m;
        }
      }
      const torch::Tensor conv = torch::randn({6, 16, 3, 3});
      torch::Tensor sparse = torch::empty_like(conv);
      FillNMSparseWeight(conv, nm, SparseDim::kRow, true, 0.5f, sparse);
      EXPECT_TRUE(torch::equal(sparse, conv * NMMask(conv, nm, SparseDim::kRow, true, 0.5f)))
          << KernelIsaName(isa) << " conv " << nm.n << ":" << nm.m;
    }
  }
  SetKernelIsaCap(KernelIsa::kAvx512);
  if (CpuKernelIsa() < KernelIsa::kAvx512) GTEST_SKIP() << kNoAvx512;
}

}  // namespace
}  // namespace nmsparse
