// FLOPs by recipe on a ViT small enough to count by hand (docs/sparsity-method.md §10).
#include "schemas/model_flops.h"

#include <gtest/gtest.h>

#include "schemas/model_catalog.h"

namespace nmsparse {
namespace {

// 8x8 image, 4x4 patches: 4 patches + class token = 5 tokens; width 8, one block, MLP hidden 16, 3 classes.
ModelArch TinyVit() {
  ModelArch a;
  a.name = "tiny";
  a.img_size = 8;
  a.patch_size = 4;
  a.in_chans = 1;
  a.num_classes = 3;
  a.embed_dim = 8;
  a.depth = 1;
  a.num_heads = 2;
  a.mlp_ratio = 2.0;
  return a;
}

// By hand, 2 FLOPs per multiply-add:
//   patch embedding 2*4*(1*4*4)*8 = 1024; qkv 2*5*8*24 = 1920; q k^T and attn v 2*2*5*5*8 = 800;
//   proj 2*5*8*8 = 640; fc1 + fc2 2*5*8*16*2 = 2560; head 2*8*3 = 48. Forward 6992, dense training 20976.
constexpr double kForward = 6992, kDenseTraining = 3 * kForward, kFF = 2560, kQkv = 1920, kPatch = 1024;
const std::vector<SparsityLocation> kFFOnly = {SparsityLocation::kFF};

TEST(TrainingFlopsTest, DenseIsThreeForwardPasses) {
  EXPECT_DOUBLE_EQ(ForwardFlops(TinyVit()), kForward);
  EXPECT_DOUBLE_EQ(SparsifiableForwardFlops(TinyVit(), kFFOnly), kFF);
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, GemmDensity{}), kDenseTraining);
}

// STE and SR-STE at 1:4 on FF: forward and input gradient at 1/4, weight gradient dense.
TEST(TrainingFlopsTest, HardMaskSkipsForwardAndInputGradientOnly) {
  const GemmDensity quarter{0.25, 1.0};
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, quarter),
                   kDenseTraining - 3 * kFF + (kFF / 4 + kFF / 4 + kFF));
  EXPECT_DOUBLE_EQ(ForwardFlopsAt(TinyVit(), kFFOnly, quarter), kForward - kFF + kFF / 4);
}

// HU24 and SSTE at 2:4 on FF: forward and input gradient at 1/2, and the weight gradient at 1/2 too (MVUE 2:4
// of dY^T); before HU24's first mask (W~ dense) only the weight gradient is halved.
TEST(TrainingFlopsTest, MvueWeightGradientCountsSparse) {
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, GemmDensity{0.5, 1.0, 0.5}),
                   kDenseTraining - 3 * kFF + 3 * (kFF / 2));
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, GemmDensity{1.0, 1.0, 0.5}),
                   kDenseTraining - kFF / 2);
  EXPECT_DOUBLE_EQ(ForwardFlopsAt(TinyVit(), kFFOnly, GemmDensity{0.5, 1.0, 0.5}), kForward - kFF / 2);
}

// Dynamic sparsity (SRigL, RigL) per parameter: fc1 (1280 of the FF FLOPs) at density 1/4 with a sparse
// weight gradient, fc2 at 1/4 on a step that reads its dense gradient; the rest dense.
TEST(TrainingFlopsTest, DynamicSparsityCountsEachParameterAtItsDensity) {
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageByParameter(TinyVit(), {}), kDenseTraining);
  const double fc = kFF / 2;
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageByParameter(TinyVit(), {{"blocks.0.mlp.fc1.weight", 0.25, 0.25},
                                                                {"blocks.0.mlp.fc2.weight", 0.25, 1.0}}),
                   kDenseTraining - 3 * kFF + 3 * (fc / 4) + (2 * (fc / 4) + fc));
}

// MDGF while D(j) > 0: W~ is dense, so is every GEMM; SDGF at its 2:4 stage of a 1:4 target: at 1/2.
TEST(TrainingFlopsTest, DecayingMaskIsDenseAndStagesCountTheirOwnDensity) {
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, GemmDensity{1.0, 1.0}), kDenseTraining);
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), kFFOnly, GemmDensity{0.5, 1.0}),
                   kDenseTraining - 2 * (kFF / 2));
}

// Each location at its own density: Q, K, V at 1:8 and FF at 1:4; the patch embedding (C) at 1:4.
TEST(TrainingFlopsTest, LocationsCountAtTheirOwnDensity) {
  const std::vector<SparsityLocation> ffqkv = {SparsityLocation::kFF, SparsityLocation::kQ,
                                               SparsityLocation::kK, SparsityLocation::kV};
  EXPECT_DOUBLE_EQ(TrainingFlopsPerImageAt(TinyVit(), ffqkv, GemmDensity{0.25, 0.125}),
                   kDenseTraining - 2 * (0.75 * kFF + 0.875 * kQkv));
  EXPECT_DOUBLE_EQ(ForwardFlopsAt(TinyVit(), {SparsityLocation::kC}, GemmDensity{0.25, 1.0}),
                   kForward - 0.75 * kPatch);
}

// The paper's inference count for ViT-B/16 with FF-only N:M is 12.51 + 22.20 * N/M GFLOPs (docs/sparsity-
// method.md §9): 22.20 = 2 * 196 patches * 768 * 3072 * 2 * 12. Ours adds the class token: 22.31.
TEST(TrainingFlopsTest, VitBaseFeedForwardShareMatchesThePaper) {
  const ModelArch vit_b = *LookupModel("vit_base_patch16_224");
  EXPECT_NEAR(SparsifiableForwardFlops(vit_b, kFFOnly) / 1e9, 22.20 * 197 / 196, 0.01);
}

TEST(TrainingFlopsTest, FinalDensityIsTheTarget) {
  SparsityConfig config;
  config.sparsity_type = SparsityType::kSrste;
  config.nm = {1, 8};
  config.nm_qkv = {2, 4};
  EXPECT_DOUBLE_EQ(FinalDensity(config).ff, 0.125);
  EXPECT_DOUBLE_EQ(FinalDensity(config).qkv, 0.5);
  config.sparsity_type = SparsityType::kDense;
  EXPECT_DOUBLE_EQ(FinalDensity(config).ff, 1.0);
}

}  // namespace
}  // namespace nmsparse
