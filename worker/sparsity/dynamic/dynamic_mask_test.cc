#include "worker/sparsity/dynamic/dynamic_mask.h"

#include "gtest/gtest.h"

#ifdef NMSPARSE_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace nmsparse {
namespace dynamic {
namespace {

torch::Tensor Row(std::vector<float> v) { return torch::tensor(v).reshape({1, -1}); }

TEST(DynamicMaskTest, BlocksRoundTripAndLayout) {
  auto t = torch::arange(24).reshape({4, 6});
  auto blocks = ToBlocks(t, {2, 3});
  ASSERT_EQ(blocks.sizes(), (std::vector<int64_t>{6, 4}));
  // Block (0, 0): rows 0-1, columns 0-1.
  EXPECT_TRUE(torch::equal(blocks[0], torch::tensor({0, 1, 6, 7}, torch::kLong)));
  // Block (1, 2): rows 2-3, columns 4-5.
  EXPECT_TRUE(torch::equal(blocks[5], torch::tensor({16, 17, 22, 23}, torch::kLong)));
  EXPECT_TRUE(torch::equal(FromBlocks(blocks, t.sizes(), {2, 3}), t));
  auto conv = torch::arange(2 * 3 * 2 * 2).reshape({2, 3, 2, 2});
  EXPECT_TRUE(torch::equal(FromBlocks(ToBlocks(conv, {2, 3}), conv.sizes(), {2, 3}), conv));
}

TEST(DynamicMaskTest, TopKRowsBreaksTiesByIndex) {
  auto mask = TopKRows(Row({1, 3, 3, 0, 3}), 2);
  EXPECT_TRUE(torch::equal(mask, Row({0, 1, 1, 0, 0})));
  EXPECT_EQ(TopKRows(Row({1, 2}), 0).sum().item<float>(), 0.0f);
  EXPECT_EQ(TopKRows(Row({1, 2}), 5).sum().item<float>(), 2.0f);
  EXPECT_EQ(ActivePerBlock(10, 0.9), 1);
  EXPECT_EQ(ActivePerBlock(10, 0.95), 0);  // round(9.5) = 10 pruned.
  EXPECT_EQ(ActivePerBlock(7, 0.5), 3);    // round(3.5) = 4 pruned.
}

TEST(DynamicMaskTest, BalancedGroupsGiveEqualCountsPerGroup) {
  torch::manual_seed(0);
  // Magnitudes concentrated in the first rows/columns, so an unbalanced top-k would not be even.
  auto w = torch::randn({8, 12}) * torch::linspace(10, 0.1, 8).reshape({8, 1}) *
           torch::linspace(10, 0.1, 12).reshape({1, 12});
  for (const Blocks b : {Blocks{4, 1}, Blocks{1, 3}, Blocks{2, 2}}) {
    for (Init init : {Init::kRandom, Init::kTopk, Init::kFromZeros}) {
      auto mask = InitialMask(w, 0.75, init, b, 7);
      auto per_block = ToBlocks(mask, b).sum(1);
      const int64_t size = 96 / (b.out_groups * b.in_groups);
      for (int64_t i = 0; i < per_block.size(0); ++i) {
        EXPECT_EQ(per_block[i].item<float>(), ActivePerBlock(size, 0.75))
            << b.out_groups << "x" << b.in_groups;
      }
    }
  }
  auto unbalanced = InitialMask(w, 0.75, Init::kTopk, {1, 1}, 7);
  EXPECT_NE(unbalanced.narrow(0, 0, 2).sum().item<float>(), unbalanced.narrow(0, 6, 2).sum().item<float>());
  // Drop/grow and GMP keep the counts per block too.
  auto mask = InitialMask(w, 0.5, Init::kRandom, {4, 1}, 1);
  auto grown = DropAndGrow(w * mask, mask, torch::rand({8, 12}), 0.5, 0.3, {4, 1});
  auto pruned = PruneByMagnitude(w * grown, grown, 0.8, {4, 1});
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ToBlocks(grown, {4, 1})[i].sum().item<float>(), 12.0f);
    EXPECT_EQ(ToBlocks(pruned, {4, 1})[i].sum().item<float>(), ActivePerBlock(24, 0.8));
  }
}

TEST(DynamicMaskTest, InitMethods) {
  auto w = Row({0.5f, -4, 0, 3, 0, -0.1f, 2, 0});
  EXPECT_TRUE(torch::equal(InitialMask(w, 0.5, Init::kTopk, {}, 0),
                           Row({0, 1, 0, 1, 0, 0, 1, 0}) + Row({1, 0, 0, 0, 0, 0, 0, 0})));
  // from_zeros: the three zeros are pruned first; 5 of the 5 non-zeros stay at sparsity 3/8.
  EXPECT_TRUE(torch::equal(InitialMask(w, 0.375, Init::kFromZeros, {}, 3), w.ne(0).to(torch::kFloat)));
  auto random = InitialMask(torch::ones({1, 1000}), 0.9, Init::kRandom, {}, 11);
  EXPECT_EQ(random.sum().item<float>(), 100.0f);
  EXPECT_TRUE(torch::equal(random, InitialMask(torch::ones({1, 1000}), 0.9, Init::kRandom, {}, 11)));
  EXPECT_FALSE(torch::equal(random, InitialMask(torch::ones({1, 1000}), 0.9, Init::kRandom, {}, 12)));
}

TEST(DynamicMaskTest, RiglRegrowsWhereGradientIsLargest) {
  auto w = Row({8, -7, 6, 5, 0, 0, 0, 0});
  auto mask = Row({1, 1, 1, 1, 0, 0, 0, 0});
  auto grad = Row({0, 0, 0, 0, 0.1f, -5, 0.2f, 3});
  // 50% sparse, drop 50% of the 4 active: keep |W| = 8, 7; grow at |g| = 5 and 3.
  auto out = DropAndGrow(w, mask, grad, 0.5, 0.5, {});
  EXPECT_TRUE(torch::equal(out, Row({1, 1, 0, 0, 0, 1, 0, 1}))) << out;
  // A dropped weight with a large gradient may come straight back (RigL's rule).
  auto back = DropAndGrow(w, mask, Row({0, 0, 9, 0, 0, 1, 0, 0}), 0.5, 0.5, {});
  EXPECT_TRUE(torch::equal(back, Row({1, 1, 1, 0, 0, 1, 0, 0}))) << back;
}

TEST(DynamicMaskTest, SetRegrowthCount) {
  torch::manual_seed(3);
  auto w = torch::randn({1, 200});
  auto mask = InitialMask(w, 0.8, Init::kTopk, {}, 0);  // 40 active.
  auto masked = w * mask;
  auto out = DropAndGrow(masked, mask, RandomScores(w, 5), 0.8, 0.25, {});
  EXPECT_EQ(out.sum().item<float>(), 40.0f);
  // round(0.25 * 40) = 10 grown, 30 kept: the 30 largest active |W|.
  auto keep = TopKRows(masked.abs() + mask * 100, 30);
  EXPECT_EQ((out * keep).sum().item<float>(), 30.0f);
  EXPECT_EQ((out * (1 - keep)).sum().item<float>(), 10.0f);
  // Sparsity going up: fewer active, still 25% of them regrown.
  auto up = DropAndGrow(masked, mask, RandomScores(w, 6), 0.9, 0.25, {});
  EXPECT_EQ(up.sum().item<float>(), 20.0f);
  EXPECT_EQ((up * TopKRows(masked.abs() + mask * 100, 15)).sum().item<float>(), 15.0f);
}

TEST(DynamicMaskTest, GmpKeepsLargestActiveWeights) {
  auto w = Row({5, 0, -3, 0, 1, 2});
  auto mask = Row({1, 0, 1, 0, 1, 1});
  EXPECT_TRUE(torch::equal(PruneByMagnitude(w, mask, 0.5, {}), Row({1, 0, 1, 0, 0, 1})));
  // Going denser regrows inactive weights (at zero).
  EXPECT_EQ(PruneByMagnitude(w, mask, 0.0, {}).sum().item<float>(), 6.0f);
}

// Half a weight rounds up, as llround did: round(0.5 * 5) = 3 grown, 2 kept.
TEST(DynamicMaskTest, HalfRegrowthRoundsUp) {
  auto w = Row({9, 8, 7, 6, 5, 0, 0, 0, 0, 0});
  auto mask = Row({1, 1, 1, 1, 1, 0, 0, 0, 0, 0});
  auto out = DropAndGrow(w, mask, Row({0, 0, 0, 0, 0, 5, 4, 3, 2, 1}), 0.5, 0.5, {});
  EXPECT_TRUE(torch::equal(out, Row({1, 1, 0, 0, 0, 1, 1, 1, 0, 0}))) << out;
}

// On a GPU the mask updates stay on the device (no host read: CUDA's sync debug mode would throw) and give
// the CPU's masks. Skips without a GPU.
TEST(DynamicMaskTest, GpuUpdatesMatchTheCpuWithoutHostReads) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  torch::manual_seed(4);
  const auto w = torch::randn({64, 48});
  const Blocks b{4, 2};
  const auto mask = InitialMask(w, 0.75, Init::kTopk, b, 1);
  const auto grad = torch::randn({64, 48});
  const torch::Device cuda(torch::kCUDA, 0);
  const auto wc = w.to(cuda), mc = mask.to(cuda), gc = grad.to(cuda);
  torch::cuda::synchronize();
#ifdef NMSPARSE_WITH_CUDA
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
#endif
  torch::Tensor init, gmp, rigl, set;
  EXPECT_NO_THROW({
    init = InitialMask(wc, 0.75, Init::kRandom, b, 2);
    gmp = PruneByMagnitude(wc, mc, 0.8, b);
    rigl = DropAndGrow(wc * mc, mc, gc, 0.75, 0.3, b);
    set = DropAndGrow(wc * mc, mc, RandomScores(wc, 3), 0.75, 0.3, b);
  });
#ifdef NMSPARSE_WITH_CUDA
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
#endif
  EXPECT_TRUE(torch::equal(init.cpu(), InitialMask(w, 0.75, Init::kRandom, b, 2)));
  EXPECT_TRUE(torch::equal(gmp.cpu(), PruneByMagnitude(w, mask, 0.8, b)));
  EXPECT_TRUE(torch::equal(rigl.cpu(), DropAndGrow(w * mask, mask, grad, 0.75, 0.3, b)));
  EXPECT_TRUE(torch::equal(set.cpu(), DropAndGrow(w * mask, mask, RandomScores(w, 3), 0.75, 0.3, b)));
}

}  // namespace
}  // namespace dynamic
}  // namespace nmsparse
