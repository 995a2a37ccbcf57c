// Properties of the N:M and unstructured masks: exactly N kept per group for every layout and every N:M the
// SDGF tables use, agreement with a naive per-group reference, the tie rule, and the layer error.
#include "worker/sparsity/nm_mask.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "schemas/structure_decay.h"
#include "worker/sparsity/nm_group_select.h"

namespace nmsparse {
namespace {

// `t` (weight-shaped) in the group layout of spec §1, viewed as [numel / M, M].
torch::Tensor Groups(const torch::Tensor& t, int m, SparseDim dim, bool is_conv) {
  torch::Tensor buffer = is_conv ? t.permute({0, 2, 3, 1}) : dim == SparseDim::kCol ? t.t() : t;
  return buffer.contiguous().view({-1, m});
}

// Naive reference: per group, a stable sort by descending |w| keeps the first N (lower index wins ties).
torch::Tensor ReferenceMask(const torch::Tensor& w, NM nm, SparseDim dim, bool is_conv) {
  torch::Tensor groups = Groups(w, nm.m, dim, is_conv).abs();
  torch::Tensor mask = torch::zeros_like(groups);
  auto g = groups.accessor<float, 2>();
  auto out = mask.accessor<float, 2>();
  for (int64_t r = 0; r < groups.size(0); ++r) {
    std::vector<int64_t> order(nm.m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return g[r][a] > g[r][b]; });
    for (int i = 0; i < nm.n; ++i) out[r][order[i]] = 1.f;
  }
  // Back to the weight's layout.
  if (is_conv) {
    return mask.view({w.size(0), w.size(2), w.size(3), w.size(1)}).permute({0, 3, 1, 2}).contiguous();
  }
  if (dim == SparseDim::kCol) return mask.view({w.size(1), w.size(0)}).t().contiguous();
  return mask.view(w.sizes());
}

void ExpectValidMask(const torch::Tensor& w, NM nm, SparseDim dim, bool is_conv) {
  SCOPED_TRACE(testing::Message() << nm.n << ":" << nm.m << " " << w.sizes() << (is_conv ? " conv" : "")
                                  << (dim == SparseDim::kCol ? " col" : " row"));
  const torch::Tensor mask = NMMask(w, nm, dim, is_conv);
  ASSERT_EQ(mask.sizes(), w.sizes());
  EXPECT_TRUE(((mask == 0) | (mask == 1)).all().item<bool>());
  const torch::Tensor groups = Groups(mask, nm.m, dim, is_conv);
  EXPECT_TRUE(groups.sum(1).eq(nm.n).all().item<bool>()) << "a group does not hold exactly N ones";
  // Every kept magnitude is >= every pruned magnitude of its group.
  const torch::Tensor mag = Groups(w.abs(), nm.m, dim, is_conv);
  const torch::Tensor kept_min = torch::where(groups.eq(1), mag, torch::full_like(mag, INFINITY)).amin(1);
  const torch::Tensor pruned_max = torch::where(groups.eq(0), mag, torch::full_like(mag, -1.f)).amax(1);
  EXPECT_TRUE(kept_min.ge(pruned_max).all().item<bool>());
}

TEST(NMMaskTest, ExactlyNPerGroupForRandomShapesAndLayouts) {
  torch::manual_seed(7);
  const std::vector<NM> nms = {{2, 4},    {1, 4},   {3, 4},     {1, 8},    {4, 8},    {7, 8},
                               {1, 16},   {15, 16}, {8, 64},    {1, 32},   {24, 32},  {40, 64},
                               {16, 128}, {8, 256}, {250, 256}, {80, 256}, {200, 256}};
  int checked = 0;
  int straddling = 0;
  for (int trial = 0; trial < 20; ++trial) {
    for (NM nm : nms) {
      // Shapes whose numel is a multiple of M but whose rows need not be (groups straddle rows).
      const int64_t out = 1 + torch::randint(1, 24, {1}).item<int64_t>();
      const int64_t in = nm.m * (1 + torch::randint(0, 4, {1}).item<int64_t>()) / (trial % 2 == 0 ? 1 : 2);
      if (in == 0 || (out * in) % nm.m != 0) continue;
      const torch::Tensor w = torch::randn({out, in});
      ++checked;
      straddling += in % nm.m != 0;
      ExpectValidMask(w, nm, SparseDim::kRow, false);
      ExpectValidMask(w, nm, SparseDim::kCol, false);
      EXPECT_TRUE(
          torch::equal(NMMask(w, nm, SparseDim::kRow, false), ReferenceMask(w, nm, SparseDim::kRow, false)));
      EXPECT_TRUE(
          torch::equal(NMMask(w, nm, SparseDim::kCol, false), ReferenceMask(w, nm, SparseDim::kCol, false)));
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(straddling, 20);
}

// The per-group selection the CUDA kernel runs (nm_group_select.h), run here on the host for every N:M the
// kernel has a path for (rank up to M = 16, threshold above, any M), on magnitudes drawn from few values so
// that ties are common, with infinities and NaN: it keeps exactly what the reference keeps.
TEST(NMMaskTest, TheGpuKernelsGroupSelectionMatchesTheReference) {
  torch::manual_seed(11);
  const std::vector<NM> nms = {{2, 4},  {1, 4},  {3, 4},   {1, 8},  {4, 8},  {2, 12},  {1, 16},
                               {5, 16}, {1, 32}, {16, 32}, {8, 64}, {3, 40}, {16, 128}};
  for (NM nm : nms) {
    torch::Tensor w = torch::randint(-3, 4, {64, nm.m}).to(torch::kFloat);
    w[0][0] = INFINITY;
    w[1][nm.m - 1] = -INFINITY;
    w[2][1 % nm.m] = NAN;
    const torch::Tensor expected = NMMask(w, nm, SparseDim::kRow, false);
    torch::Tensor selected = torch::zeros_like(w);
    for (int64_t g = 0; g < w.size(0); ++g) {
      std::vector<int32_t> bits(nm.m);
      for (int i = 0; i < nm.m; ++i) bits[i] = nm_select::MagnitudeBits(w[g][i].item<float>());
      nm_select::SelectGroup(bits, static_cast<int>(nm.m), static_cast<int>(nm.n),
                             [&](int i, bool kept) { selected[g][i] = kept ? 1.f : 0.f; });
    }
    EXPECT_TRUE(torch::equal(selected, expected)) << nm.n << ":" << nm.m;
    EXPECT_TRUE(
        torch::equal(expected, ReferenceMask(w.nan_to_num(/*nan=*/INFINITY), nm, SparseDim::kRow, false)))
        << nm.n << ":" << nm.m << " (NaN ranks above infinity)";
  }
}

TEST(NMMaskTest, ConvGroupsAlongInputChannels) {
  torch::manual_seed(8);
  for (NM nm : std::vector<NM>{{2, 4}, {1, 8}, {8, 64}, {1, 16}}) {
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{8, 16, 3, 3}, {6, 8, 2, 2}, {4, 32, 1, 1}}) {
      const torch::Tensor w = torch::randn(shape);
      if (w.numel() % nm.m != 0) continue;
      ExpectValidMask(w, nm, SparseDim::kRow, true);
      EXPECT_TRUE(
          torch::equal(NMMask(w, nm, SparseDim::kRow, true), ReferenceMask(w, nm, SparseDim::kRow, true)));
    }
  }
}

TEST(NMMaskTest, EveryStructureDecayStageOnAViTBLayer) {
  torch::manual_seed(9);
  const torch::Tensor w = torch::randn({768, 3072});
  std::vector<NM> all = {{8, 64}, {1, 64}, {8, 1024}};
  for (StructureDecayType type :
       {StructureDecayType::kSparsify, StructureDecayType::kFine, StructureDecayType::kDensify}) {
    for (NM target : std::vector<NM>{{2, 4}, {1, 4}, {1, 8}, {1, 16}, {1, 32}, {2, 8}}) {
      for (NM nm : StructureDecayTable(type, target, 8)) all.push_back(nm);
    }
  }
  std::sort(all.begin(), all.end(), [](NM a, NM b) { return a.m != b.m ? a.m < b.m : a.n < b.n; });
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (NM nm : all) {
    ExpectValidMask(w, nm, SparseDim::kRow, false);
    if (nm.m >= 256) ExpectValidMask(w, nm, SparseDim::kCol, false);
  }
}

TEST(NMMaskTest, TiesKeepTheLowerIndex) {
  const torch::Tensor w = torch::tensor({1.f, 1.f, 1.f, 1.f,       // all equal
                                         0.5f, -1.f, 1.f, 0.5f,    // |-1| == |1| both kept
                                         0.2f, 0.3f, -0.3f, 0.3f,  // three-way tie for 2 places
                                         0.f, 0.f, 0.f, 0.f})
                              .view({4, 4});
  const torch::Tensor expected =
      torch::tensor({1.f, 1.f, 0.f, 0.f, 0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 0.f, 1.f, 1.f, 0.f, 0.f})
          .view({4, 4});
  EXPECT_TRUE(torch::equal(NMMask(w, {2, 4}, SparseDim::kRow, false), expected));
  // Every kernel path (argmax, all-but-argmin, rank, bisection, insertion keep/prune side, nth_element) keeps
  // the first N of a group of equal magnitudes, and the larger ones first when some differ.
  for (NM nm : std::vector<NM>{{1, 8},
                               {7, 8},
                               {2, 8},
                               {16, 32},
                               {8, 64},
                               {40, 64},
                               {16, 128},
                               {8, 256},
                               {250, 256},
                               {80, 256},
                               {200, 256}}) {
    torch::Tensor w = torch::ones({2, nm.m}) * 0.5f;
    w[1][nm.m - 1] = -2.f;  // Second group: one larger magnitude at the end, the rest tied.
    const torch::Tensor mask = NMMask(w, nm, SparseDim::kRow, false);
    EXPECT_TRUE(mask[0].narrow(0, 0, nm.n).eq(1).all().item<bool>()) << nm.n << ":" << nm.m;
    EXPECT_EQ(mask[0].sum().item<float>(), nm.n) << nm.n << ":" << nm.m;
    EXPECT_EQ(mask[1][nm.m - 1].item<float>(), 1.f) << nm.n << ":" << nm.m;
    EXPECT_TRUE(mask[1].narrow(0, 0, nm.n - 1).eq(1).all().item<bool>()) << nm.n << ":" << nm.m;
    EXPECT_EQ(mask[1].sum().item<float>(), nm.n) << nm.n << ":" << nm.m;
  }
  // Column layout: ties resolve by index in the transposed buffer (lower input row first).
  const torch::Tensor col = NMMask(torch::ones({4, 2}), {1, 4}, SparseDim::kCol, false);
  EXPECT_TRUE(torch::equal(col, torch::tensor({1.f, 1.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f}).view({4, 2})));
}

TEST(NMMaskTest, TensorOpsPathForOtherDevicesMatchesTheCpuKernels) {
  // Non-CPU weights (CUDA builds) use SelectTopNWithTensorOps; check it against the kernels here, ties too.
  torch::manual_seed(12);
  for (NM nm : std::vector<NM>{{2, 4}, {1, 8}, {7, 8}, {4, 8}, {16, 32}, {8, 64}, {8, 256}, {200, 256}}) {
    for (const torch::Tensor& w :
         {torch::randn({24, 256}), torch::randint(0, 3, {24, 256}).to(torch::kFloat)}) {
      const torch::Tensor kernel = NMMask(w, nm, SparseDim::kRow, false, 0.25f);
      EXPECT_TRUE(torch::equal(SelectTopNWithTensorOps(w, nm.n, nm.m, 0.25f), kernel)) << nm.n << ":" << nm.m;
    }
  }
  const torch::Tensor w = torch::randint(0, 4, {16, 8}).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(SelectTopNWithTensorOps(w, UnstructuredKeepCount(128, 0.9), 128, 0.f),
                           UnstructuredMask(w, 0.9)));
}

TEST(NMMaskTest, NanCountsAsTheLargestMagnitude) {
  // A diverged weight must not break the exactly-N invariant (nor nth_element's ordering).
  for (NM nm : std::vector<NM>{{1, 4}, {3, 4}, {2, 4}, {16, 32}, {8, 256}, {80, 256}}) {
    torch::Tensor w = torch::randn({2, 256});
    w[0][3] = NAN;
    const torch::Tensor mask = NMMask(w, nm, SparseDim::kRow, false);
    EXPECT_EQ(mask[0][3].item<float>(), 1.f) << nm.n << ":" << nm.m;
    EXPECT_TRUE(mask.view({-1, nm.m}).sum(1).eq(nm.n).all().item<bool>()) << nm.n << ":" << nm.m;
  }
}

TEST(NMMaskTest, PrunedValueGivesTheDecayMultiplier) {
  torch::manual_seed(10);
  const torch::Tensor w = torch::randn({8, 16});
  const torch::Tensor mask = NMMask(w, {1, 4}, SparseDim::kRow, false);
  const torch::Tensor mult = NMMask(w, {1, 4}, SparseDim::kRow, false, 0.25f);
  EXPECT_TRUE(torch::equal(mult, torch::where(mask.eq(1), torch::ones_like(w), torch::full_like(w, 0.25f))));
}

TEST(NMMaskTest, UnstructuredKeepsTheLargestWithTheReferenceCount) {
  EXPECT_EQ(UnstructuredKeepCount(128, 0.9), 12);
  EXPECT_EQ(UnstructuredKeepCount(128, 0.5), 64);
  EXPECT_EQ(UnstructuredKeepCount(128, 1.0), 0);
  torch::manual_seed(11);
  const torch::Tensor w = torch::randn({16, 8});
  const torch::Tensor mask = UnstructuredMask(w, 0.9);
  EXPECT_EQ(mask.sum().item<float>(), 12.f);
  const torch::Tensor mag = w.abs();
  EXPECT_GE(torch::where(mask.eq(1), mag, torch::full_like(mag, INFINITY)).min().item<float>(),
            torch::where(mask.eq(0), mag, torch::full_like(mag, -1.f)).max().item<float>());
  const torch::Tensor ties = UnstructuredMask(torch::ones({2, 4}), 0.5);
  EXPECT_TRUE(torch::equal(ties, torch::tensor({1.f, 1.f, 1.f, 1.f, 0.f, 0.f, 0.f, 0.f}).view({2, 4})));
}

TEST(NMMaskTest, ValidateNMNamesTheLayerAndShape) {
  EXPECT_TRUE(ValidateNM("blocks.0.mlp.fc1", {1536, 384}, {8, 1024}).ok());
  const absl::Status status = ValidateNM("blocks.0.mlp.fc1", {10, 6}, {1, 8});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("blocks.0.mlp.fc1"), std::string::npos) << status;
  EXPECT_NE(status.message().find("[10, 6]"), std::string::npos) << status;
  EXPECT_FALSE(ValidateNM("x", {8, 8}, {5, 4}).ok());
  EXPECT_FALSE(ValidateNM("x", {8, 8}, {0, 4}).ok());
  EXPECT_THROW(NMMask(torch::ones({10, 6}), {1, 8}, SparseDim::kRow, false), c10::Error);
}

}  // namespace
}  // namespace nmsparse
