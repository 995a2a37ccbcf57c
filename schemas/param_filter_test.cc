#include "schemas/param_filter.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

const std::vector<ParamInfo> kViT = {{"cls_token", 3},
                                     {"pos_embed", 3},
                                     {"patch_embed.proj.weight", 4},
                                     {"patch_embed.proj.bias", 1},
                                     {"blocks.0.norm1.weight", 1},
                                     {"blocks.0.attn.qkv.weight", 2},
                                     {"blocks.0.attn.qkv.bias", 1},
                                     {"blocks.0.attn.proj.weight", 2},
                                     {"blocks.0.mlp.fc1.weight", 2},
                                     {"blocks.0.mlp.fc2.weight", 2},
                                     {"blocks.1.mlp.fc1.weight", 2},
                                     {"norm.weight", 1},
                                     {"head.weight", 2}};

DynamicSparsityGroup Group(std::vector<std::string> filter) {
  DynamicSparsityGroup g;
  g.sparsity = StepSchedule::Constant(0.5);
  g.param_filter = std::move(filter);
  return g;
}

TEST(ParamFilterTest, DefaultFilterSkipsVectorsAndNamedParameters) {
  auto owner = AssignParamGroups(kViT, {Group({})});
  ASSERT_TRUE(owner.ok()) << owner.status();
  std::vector<std::string> taken;
  for (size_t i = 0; i < kViT.size(); ++i) {
    if ((*owner)[i] == 0) taken.push_back(kViT[i].name);
  }
  EXPECT_EQ(taken,
            (std::vector<std::string>{"patch_embed.proj.weight", "blocks.0.attn.qkv.weight",
                                      "blocks.0.attn.proj.weight", "blocks.0.mlp.fc1.weight",
                                      "blocks.0.mlp.fc2.weight", "blocks.1.mlp.fc1.weight", "head.weight"}));
  EXPECT_FALSE(DefaultParamFilter({"decoder.lm_head.weight", 2}));
  EXPECT_FALSE(DefaultParamFilter({"word_embeddings.weight", 2}));
}

TEST(ParamFilterTest, GlobsCrossDotsAndFirstMatchingGroupWins) {
  EXPECT_TRUE(GlobMatch("blocks.*.mlp.*", "blocks.11.mlp.fc2.weight"));
  EXPECT_FALSE(GlobMatch("blocks.*.mlp.*", "blocks.0.attn.qkv.weight"));
  EXPECT_TRUE(GlobMatch("blocks.?.attn.qkv.weight", "blocks.3.attn.qkv.weight"));
  auto owner = AssignParamGroups(kViT, {Group({"blocks.*.mlp.*"}), Group({"blocks.*", "head.weight"})});
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ((*owner)[8], 0);  // blocks.0.mlp.fc1.weight: both match, the first wins.
  EXPECT_EQ((*owner)[10], 0);
  EXPECT_EQ((*owner)[5], 1);   // blocks.0.attn.qkv.weight.
  EXPECT_EQ((*owner)[6], 1);   // An explicit glob takes vectors too.
  EXPECT_EQ((*owner)[12], 1);  // head.weight.
  EXPECT_EQ((*owner)[0], -1);  // cls_token: no group.
}

TEST(ParamFilterTest, FilterMatchingNothingFails) {
  auto bad = AssignParamGroups(kViT, {Group({"blocks.*.mlp.*"}), Group({"blocks.*.ffn.*"})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "sparsity.dynamic[1].param_filter[0]: value 'blocks.*.ffn.*' matches no parameter of the model; "
            "its parameters: cls_token, pos_embed, patch_embed.proj.weight, patch_embed.proj.bias, "
            "blocks.0.norm1.weight, blocks.0.attn.qkv.weight, ... (13 in all)");
  auto shadowed = AssignParamGroups(kViT, {Group({"blocks.*"}), Group({"blocks.*.mlp.*"})});
  ASSERT_FALSE(shadowed.ok());
  EXPECT_NE(shadowed.status().message().find("sparsity.dynamic[1].param_filter: [blocks.*.mlp.*] matches no "
                                             "parameter left by the groups before it"),
            std::string::npos)
      << shadowed.status();
  auto vectors_only = AssignParamGroups({{"norm.weight", 1}}, {Group({})});
  ASSERT_FALSE(vectors_only.ok());
  EXPECT_NE(vectors_only.status().message().find("the default filter"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse
