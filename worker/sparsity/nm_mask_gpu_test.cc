// The fused N:M kernel on a GPU (cuda/nm_sparse_weight.cu) against the CPU kernels, which the golden vectors
// and the reference checks of nm_mask_test pin down: every layout (row, column, straddling groups, conv, a
// fused qkv with a dense block), every path of the kernel (M = 4, 8, 16, 32 in registers, any other M), masks
// and W~ with a decay. The kernel multiplies in fp32 exactly as the CPU path does, so they must agree bit for
// bit. Skips where no GPU is visible (CI, this build without CUDA); a GPU node's ctest runs it (docs/gpu.md).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {
namespace {

class NMMaskGpuTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no GPU visible to this build: nothing to compare";
  }
};

void ExpectSameOnGpu(const torch::Tensor& w, NM nm, SparseDim dim, bool is_conv) {
  SCOPED_TRACE(testing::Message() << nm.n << ":" << nm.m << " " << w.sizes() << (is_conv ? " conv" : "")
                                  << (dim == SparseDim::kCol ? " col" : " row"));
  const torch::Tensor gpu_w = w.to(torch::kCUDA);
  EXPECT_TRUE(torch::equal(NMMask(gpu_w, nm, dim, is_conv).cpu(), NMMask(w, nm, dim, is_conv)));
  for (float pruned : {0.f, 0.37f}) {
    torch::Tensor cpu_out = torch::empty_like(w);
    torch::Tensor gpu_out = torch::empty_like(gpu_w);
    FillNMSparseWeight(w, nm, dim, is_conv, pruned, cpu_out);
    FillNMSparseWeight(gpu_w, nm, dim, is_conv, pruned, gpu_out);
    EXPECT_TRUE(torch::equal(gpu_out.cpu(), cpu_out)) << "W~ with pruned value " << pruned;
  }
}

TEST_F(NMMaskGpuTest, MatchesTheCpuForEveryPathAndLayout) {
  torch::manual_seed(21);
  const std::vector<NM> nms = {{2, 4}, {1, 4}, {1, 8}, {4, 8}, {1, 16}, {15, 16}, {16, 32}, {2, 12}, {8, 64}};
  for (NM nm : nms) {
    for (int64_t rows : {int64_t{3}, int64_t{nm.m}, int64_t{2 * nm.m + 1}}) {
      const torch::Tensor w = torch::randn({rows, 4 * nm.m});
      ExpectSameOnGpu(w, nm, SparseDim::kRow, false);
      if ((w.numel() % nm.m) == 0) ExpectSameOnGpu(w, nm, SparseDim::kCol, false);
    }
    // Rows shorter than a group: groups straddle rows (the any-layout path).
    const torch::Tensor straddling = torch::randn({nm.m, 3});
    ExpectSameOnGpu(straddling, nm, SparseDim::kRow, false);
    // Ties and a NaN: the lower index wins, NaN ranks above everything.
    torch::Tensor ties = torch::randint(-2, 3, {8, 2 * nm.m}).to(torch::kFloat);
    ties[3][1] = NAN;
    ExpectSameOnGpu(ties, nm, SparseDim::kRow, false);
  }
  for (NM nm : std::vector<NM>{{2, 4}, {1, 8}, {8, 64}}) {
    ExpectSameOnGpu(torch::randn({8, 64, 4, 4}), nm, SparseDim::kRow, /*is_conv=*/true);
  }
}

TEST_F(NMMaskGpuTest, FusedQkvWeightAndGradientsMatchTheCpu) {
  torch::manual_seed(22);
  LayerRule rule;
  rule.blocks = {BlockRule{true, {2, 4}}, BlockRule{true, {1, 8}}, BlockRule{false, {2, 4}}};
  const torch::Tensor w = torch::randn({3 * 64, 64});
  const torch::Tensor g = torch::randn({3 * 64, 64});
  for (Recipe recipe : {Recipe::kDecay, Recipe::kSrste}) {
    rule.recipe = recipe;
    rule.decay = recipe == Recipe::kDecay ? 0.25f : 0.f;
    torch::Tensor cpu_w = w.clone().requires_grad_(true);
    torch::Tensor gpu_w = w.to(torch::kCUDA).requires_grad_(true);
    const torch::Tensor cpu_out = ApplyLayerRule(cpu_w, &rule);
    const torch::Tensor gpu_out = ApplyLayerRule(gpu_w, &rule);
    cpu_out.backward(g);
    gpu_out.backward(g.to(torch::kCUDA));
    EXPECT_TRUE(torch::equal(gpu_out.detach().cpu(), cpu_out.detach()));
    // SR-STE's g + lambda * (W - W~) may be one fused multiply-add on one device and two roundings on the
    // other: within 2 units of float32 rounding (u = 2^-24) of |g| + lambda |W|.
    const torch::Tensor bound = 2 * std::ldexp(1.0, -24) * (g.abs() + rule.srste_lambda * w.abs());
    EXPECT_TRUE((gpu_w.grad().cpu() - cpu_w.grad()).abs().le(bound).all().item<bool>());
  }
}

}  // namespace
}  // namespace nmsparse
