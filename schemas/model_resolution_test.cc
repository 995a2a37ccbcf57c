#include "schemas/model_resolution.h"

#include <string>

#include "gtest/gtest.h"
#include "schemas/base_spec.h"
#include "schemas/content_hash.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"

namespace nmsparse {
namespace {

ExperimentConfig MustParse(const std::string& text) {
  auto config = ParseExperimentYaml(text, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ExperimentConfig();
}

// The spec's model section, with a synthetic dataset so that only the model is checked.
ExperimentConfig Model(const std::string& section) {
  return MustParse("model: {" + section + "}\ndata: {dataset: synthetic}\n");
}

std::string ValidateError(const std::string& section) {
  absl::Status st = ValidateExperiment(Model(section));
  EXPECT_FALSE(st.ok()) << section;
  return std::string(st.message());
}

std::string ParseError(const std::string& section) {
  auto config = ParseExperimentYaml("model: {" + section + "}\n", "test.yaml");
  EXPECT_FALSE(config.ok()) << section;
  return config.ok() ? "" : std::string(config.status().message());
}

constexpr char kSmallVit[] =
    "name: vit_micro_patch4_28, embed_dim: 128, depth: 6, num_heads: 4, patch_size: 4, img_size: 28, "
    "in_chans: 1, num_classes: 10";

TEST(ModelResolutionTest, OverridesTheCatalogueEntry) {
  const ExperimentConfig c = Model(kSmallVit);
  EXPECT_TRUE(ValidateExperiment(c).ok()) << ValidateExperiment(c);
  auto arch = ResolveModel(c.model);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->embed_dim, 128);
  EXPECT_EQ(arch->depth, 6);
  EXPECT_EQ(arch->num_heads, 4);
  EXPECT_EQ(arch->patch_size, 4);

  auto swin = ResolveModel(
      Model("name: swinv2_micro_window7_28, depths: [1, 3], num_heads: [4, 8], window_size: 2, mlp_ratio: 2, "
            "qkv_bias: false")
          .model);
  ASSERT_TRUE(swin.ok()) << swin.status();
  EXPECT_EQ(swin->depths, (std::vector<int>{1, 3}));
  EXPECT_EQ(swin->stage_heads, (std::vector<int>{4, 8}));
  EXPECT_EQ(swin->window_size, 2);
  EXPECT_EQ(swin->mlp_ratio, 2.0);
  EXPECT_FALSE(swin->qkv_bias);
}

TEST(ModelResolutionTest, TheEntrysOwnValuesHashLikeTheirAbsence) {
  const ExperimentConfig plain = Model("name: vit_base_patch16_224");
  const ExperimentConfig spelled = Model(
      "name: vit_base_patch16_224, depth: 12, embed_dim: 768, num_heads: [12], patch_size: 16, mlp_ratio: 4, "
      "qkv_bias: true, class_token: true, global_pool: token");
  EXPECT_EQ(CanonicalYaml(plain), CanonicalYaml(spelled));
  EXPECT_EQ(ContentHash(plain), ContentHash(spelled));
  EXPECT_TRUE(plain == spelled);
  // A number of heads and a list of one are the same value.
  EXPECT_EQ(CanonicalYaml(Model("name: vit_base_patch16_224, num_heads: 4")),
            CanonicalYaml(Model("name: vit_base_patch16_224, num_heads: [4]")));
  const ExperimentConfig deeper = Model("name: vit_base_patch16_224, depth: 6");
  EXPECT_NE(ContentHash(plain), ContentHash(deeper));
  EXPECT_NE(CanonicalYaml(deeper).find("depth: 6"), std::string::npos) << CanonicalYaml(deeper);
}

// timm's pretrained_window_sizes: the fine-tune's own (12, 12, 12, 6) and timm's all-zero default on a model
// without any are the model's own values; other sizes resolve and are written.
TEST(ModelResolutionTest, PretrainedWindowSizes) {
  const char* kFineTune = "name: swinv2_base_window12to16_192to256";
  EXPECT_EQ(CanonicalYaml(Model(kFineTune)),
            CanonicalYaml(Model(std::string(kFineTune) + ", pretrained_window_sizes: [12, 12, 12, 6]")));
  EXPECT_EQ(CanonicalYaml(Model("name: swinv2_micro_window7_28")),
            CanonicalYaml(Model("name: swinv2_micro_window7_28, pretrained_window_sizes: [0, 0]")));
  const ExperimentConfig given = Model("name: swinv2_micro_window7_28, pretrained_window_sizes: [0, 4]");
  EXPECT_NE(CanonicalYaml(given).find("pretrained_window_sizes: [0, 4]"), std::string::npos)
      << CanonicalYaml(given);
  auto arch = ResolveModel(given.model);
  ASSERT_TRUE(arch.ok()) << arch.status();
  EXPECT_EQ(arch->pretrained_window_sizes, (std::vector<int>{0, 4}));
  auto back = ParseExperimentYaml(BaseSpecYaml(given), "wire");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CanonicalYaml(*back), CanonicalYaml(given));
}

TEST(ModelResolutionTest, SurvivesTheWire) {
  for (const char* section :
       {kSmallVit, "name: vit_micro_patch4_28, qkv_bias: false, class_token: false, global_pool: avg",
        "name: swinv2_micro_window7_28, depths: [1, 3], num_heads: [4, 8], window_size: 2, mlp_ratio: 2.5"}) {
    const ExperimentConfig c = Model(section);
    auto back = ParseExperimentYaml(BaseSpecYaml(c), "wire");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(CanonicalYaml(*back), CanonicalYaml(c)) << section;
  }
}

TEST(ModelResolutionTest, ReferenceConfigModelKwargs) {
  const ExperimentConfig flat = MustParse(
      "model: vit_micro_patch4_28\ndataset: synthetic\nmodel_kwargs: {embed_dim: 128, depth: 6, num_heads: "
      "4}\n");
  EXPECT_EQ(flat.model.embed_dim, 128);
  EXPECT_EQ(flat.model.depth, 6);
  EXPECT_EQ(flat.model.num_heads, (std::vector<int>{4}));
  auto bad = ParseExperimentYaml("model: vit_micro_patch4_28\nmodel_kwargs: {dpeth: 6}\n", "ref.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("model_kwargs.dpeth: unknown model argument; known: "),
            std::string::npos)
      << bad.status();
}

TEST(ModelResolutionTest, ErrorsNameTheKey) {
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, embed_dim: 130"),
            "model.embed_dim: value 130 is not a multiple of num_heads (4)");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, patch_size: 5"),
            "model.patch_size: value 5 does not divide the image size 28 of vit_micro_patch4_28");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, img_size: 30"),
            "model.img_size: value 30 is not a multiple of the patch size 4 of vit_micro_patch4_28");
  EXPECT_EQ(
      ValidateError("name: swinv2_micro_window7_28, window_size: 5"),
      "model.window_size: value 5 gives a 14x14 token grid at stage 0 of swinv2_micro_window7_28, which "
      "window 5 and the 2x2 patch merging cannot tile");
  EXPECT_EQ(ValidateError("name: swinv2_micro_window7_28, depths: [2, 2, 2]"),
            "model.num_heads: has 2 entries for 3 stages (depths): one per stage");
  EXPECT_EQ(ValidateError("name: swinv2_micro_window7_28, num_heads: [3, 4]"),
            "model.embed_dim: value 32 gives width 32 at stage 0, not a multiple of its num_heads (3)");
  EXPECT_EQ(
      ValidateError("name: swinv2_micro_window7_28, depth: 4"),
      "model.depth: swinv2_micro_window7_28 is a SwinV2, which has no depth (SwinV2: depths, one per stage)");
  EXPECT_EQ(ValidateError("name: swinv2_micro_window7_28, class_token: true"),
            "model.class_token: swinv2_micro_window7_28 is a SwinV2, which has no class_token");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, depths: [2, 2]"),
            "model.depths: vit_micro_patch4_28 is a ViT, which has no depths (ViT: depth)");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, window_size: 7"),
            "model.window_size: vit_micro_patch4_28 is a ViT, which has no window_size");
  EXPECT_EQ(
      ValidateError("name: vit_micro_patch4_28, pretrained_window_sizes: [7]"),
      "model.pretrained_window_sizes: vit_micro_patch4_28 is a ViT, which has no pretrained_window_sizes");
  EXPECT_EQ(ValidateError("name: swinv2_micro_window7_28, pretrained_window_sizes: [7, 7, 7]"),
            "model.pretrained_window_sizes: has 3 entries for 2 stages (depths): one per stage");
  EXPECT_EQ(ValidateError("name: swinv2_base_window12to16_192to256, depths: [2, 2], num_heads: [4, 8]"),
            "model.pretrained_window_sizes: has 4 entries for 2 stages (depths): one per stage");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, num_heads: [2, 4]"),
            "model.num_heads: a ViT takes one number of heads, not a list per stage");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, global_pool: avg"),
            "model.global_pool: value avg needs class_token: false");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, class_token: false, global_pool: token"),
            "model.global_pool: value token needs class_token: true");
}

TEST(ModelResolutionTest, SizesArePositiveAndBounded) {
  EXPECT_NE(ParseError("name: vit_micro_patch4_28, depth: -1").find("model.depth: value -1 is out of range"),
            std::string::npos);
  EXPECT_NE(ParseError("name: vit_micro_patch4_28, num_heads: [4, 0]")
                .find("model.num_heads[1]: value 0 is out of range"),
            std::string::npos);
  EXPECT_NE(ParseError("name: swinv2_micro_window7_28, depths: []")
                .find("model.depths: an empty list gives no value"),
            std::string::npos);
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, embed_dim: 100000, num_heads: 1"),
            "model.embed_dim: value 100000 is over the limit of 65536 (schemas/limits.h)");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, depth: 5000"),
            "model.depth: 5000 blocks are over the limit of 1024 (schemas/limits.h)");
  EXPECT_EQ(
      ValidateError("name: vit_micro_patch4_28, img_size: 4096, patch_size: 2"),
      "model.img_size: value 4096 with patch size 2 gives 4194304 patch tokens, over the limit of 1048576 "
      "(schemas/limits.h)");
  EXPECT_EQ(ValidateError("name: vit_micro_patch4_28, embed_dim: 65536, depth: 1000, num_heads: 1"),
            "model: 51,540,464,762,890 parameters exceed the limit of 10,000,000,000 (schemas/limits.h)");
  EXPECT_EQ(
      ValidateError("name: vit_micro_patch4_28, embed_dim: 4096, depth: 20, num_heads: 1, img_size: 2048, "
                    "patch_size: 2"),
      "model: at most 3.78e+17 FLOPs per image (2 x parameters x tokens + attention) exceed the limit of "
      "1e+15 "
      "(schemas/limits.h)");
}

}  // namespace
}  // namespace nmsparse
