// The size check's FLOPs bound (schemas/model_resolution.h, ForwardFlopsBound) against the count
// (schemas/model_flops.h) over the catalogue and model_kwargs sizes: never below it, and within a stated
// factor.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "schemas/model_flops.h"
#include "schemas/model_resolution.h"

namespace nmsparse {
namespace {

ModelArch Arch(const std::string& name, int img_size, int patch_size, int embed_dim, int depth, int heads) {
  ModelConfig m;
  m.name = name;
  m.img_size = img_size;
  m.patch_size = patch_size;
  m.embed_dim = embed_dim;
  m.depth = depth;
  m.num_heads = {heads};
  absl::StatusOr<ModelArch> arch = ResolveModel(m);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return *arch;
}

// How far above the count the bound may be. ViT: every weight is used once per token, so 2 x parameters x
// (tokens + 1) overcounts only the weights not in a matmul per token: norms and biases (~13 x width of a
// block's 12 x width^2), the head (used once) and the position embedding ((tokens + 1) x width, the most
// where tokens outnumber the width: 1.12 at patch 2 on 224 with width 64, 1.003 to 1.07 for the others
// here); 1.25 leaves room. SwinV2: a stage-i weight is counted at stage 0's tokens, 4^i times the tokens it
// sees, so the last stage's weights are overcounted by 4^(stages-1); times the same 1.25.
double AllowedFactor(const ModelArch& arch) {
  if (arch.family == ModelFamily::kVit) return 1.25;
  return 1.25 * std::pow(4.0, static_cast<double>(arch.depths.size()) - 1);
}

TEST(FlopsBoundTest, BoundIsAboveTheTrainersCountWithinAFactor) {
  std::vector<ModelArch> sizes;
  for (const std::string& name : ModelNames()) sizes.push_back(*LookupModel(name));
  // model_kwargs sizes: the 128/6/4 patch-4 ViT of issue 28, attention-dominated ones (many tokens, narrow),
  // a wide one, and SwinV2 windows as large as a stage's grid.
  sizes.push_back(Arch("vit_nano_patch7_28", 28, 4, 128, 6, 4));
  sizes.push_back(Arch("vit_nano_patch7_28", 224, 4, 128, 6, 4));
  sizes.push_back(Arch("vit_nano_patch7_28", 224, 2, 64, 4, 2));
  sizes.push_back(Arch("vit_base_patch16_224", 224, 14, 1280, 32, 16));
  sizes.push_back(Arch("vit_base_patch16_224", 384, 16, 768, 12, 12));
  ModelConfig swin;
  swin.name = "swinv2_micro_window7_28";
  swin.img_size = 32;
  swin.patch_size = 4;
  swin.window_size = 8;
  sizes.push_back(*ResolveModel(swin));
  for (const ModelArch& arch : sizes) {
    const double count = ForwardFlops(arch), bound = ForwardFlopsBound(arch);
    SCOPED_TRACE(arch.name + " img " + std::to_string(arch.img_size) + " patch " +
                 std::to_string(arch.patch_size) + " dim " + std::to_string(arch.embed_dim) +
                 ": bound/count " + std::to_string(bound / count));
    EXPECT_GE(bound, count);
    EXPECT_LE(bound, AllowedFactor(arch) * count);
  }
}

}  // namespace
}  // namespace nmsparse
