#include "schemas/model_arch_text.h"

#include <gtest/gtest.h>

#include "schemas/model_resolution.h"

namespace nmsparse {
namespace {

ModelArch Resolve(const ModelConfig& m) {
  absl::StatusOr<ModelArch> arch = ResolveModel(m);
  EXPECT_TRUE(arch.ok()) << arch.status();
  return *arch;
}

TEST(ModelArchTextTest, SameModelSpelledTwoWaysHasOneText) {
  ModelConfig micro;
  micro.name = "vit_micro_patch4_28";
  ModelConfig nano_as_micro;  // vit_nano_patch7_28 with micro's kwargs
  nano_as_micro.name = "vit_nano_patch7_28";
  nano_as_micro.patch_size = 4;
  nano_as_micro.embed_dim = 64;
  nano_as_micro.depth = 4;
  nano_as_micro.num_heads = {4};
  EXPECT_EQ(ArchitectureText(Resolve(micro)), ArchitectureText(Resolve(nano_as_micro)));
  EXPECT_EQ(ArchitectureText(Resolve(micro)),
            "family: vit\nimg_size: 28\npatch_size: 4\nin_chans: 1\nnum_classes: 10\nembed_dim: 64\n"
            "depth: 4\nnum_heads: 4\nmlp_ratio: 4\nqkv_bias: true\nclass_token: true\n");
}

TEST(ModelArchTextTest, DifferencesNameEveryKeyAndBothValues) {
  ModelConfig m;
  m.name = "vit_micro_patch4_28";
  const std::string before = ArchitectureText(Resolve(m));
  m.depth = 6;
  m.embed_dim = 128;
  const std::string after = ArchitectureText(Resolve(m));
  const std::vector<ArchitectureDifference> d = ArchitectureDifferences(before, after);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(DescribeDifferences(d, "the checkpoint's"),
            "model.embed_dim: 128 differs from the checkpoint's 64; "
            "model.depth: 6 differs from the checkpoint's 4");
  EXPECT_TRUE(ArchitectureDifferences(after, after).empty());
}

TEST(ModelArchTextTest, FamiliesDifferInTheirOwnKeys) {
  ModelConfig vit, swin;
  vit.name = "vit_micro_patch4_28";
  swin.name = "swinv2_micro_window7_28";
  const std::string text = ArchitectureText(Resolve(swin));
  EXPECT_NE(text.find("depths: ["), std::string::npos) << text;
  const std::string described =
      DescribeDifferences(ArchitectureDifferences(ArchitectureText(Resolve(vit)), text), "the parent's");
  EXPECT_NE(described.find("model.family: swinv2 differs from the parent's vit"), std::string::npos);
  EXPECT_NE(described.find("model.depth: (none) differs from the parent's 4"), std::string::npos);
}

// The pre-training windows change what the position bias computes, not a weight's shape: a fork that changes
// them is told so; an architecture without them keeps the text it had before the key existed.
TEST(ModelArchTextTest, PretrainedWindowSizesOnlyWhereGiven) {
  ModelConfig fine_tuned, plain;
  fine_tuned.name = "swinv2_base_window12to16_192to256";
  plain.name = "swinv2_base_window16_256";
  const std::string text = ArchitectureText(Resolve(fine_tuned));
  EXPECT_NE(text.find("pretrained_window_sizes: [12, 12, 12, 6]\n"), std::string::npos) << text;
  EXPECT_EQ(ArchitectureText(Resolve(plain)).find("pretrained_window_sizes"), std::string::npos);
  EXPECT_EQ(
      DescribeDifferences(ArchitectureDifferences(ArchitectureText(Resolve(plain)), text), "the parent's"),
      "model.pretrained_window_sizes: [12, 12, 12, 6] differs from the parent's (none)");
}

}  // namespace
}  // namespace nmsparse
