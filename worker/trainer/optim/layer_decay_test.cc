// Layer-wise learning-rate decay against timm's create_optimizer_v2(..., layer_decay=0.75) (golden file from
// tools/timm_layer_decay_golden.py): each parameter's group, lr_scale and weight decay, and the rates the
// schedule's base rate gives each group.
#include "worker/trainer/optim/layer_decay.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "worker/trainer/models/model_factory.h"
#include "worker/trainer/optim/optimizer.h"

namespace nmsparse {
namespace {

struct GoldenParam {
  std::string name;
  size_t group = 0;
  double lr_scale = 0, weight_decay = 0;
};

struct GoldenModel {
  std::string name;
  size_t groups = 0;
  std::vector<GoldenParam> params;  // In named_parameters order.
};

std::vector<GoldenModel> ReadGolden() {
  std::ifstream in("worker/trainer/testdata/timm_layer_decay.txt");
  std::vector<GoldenModel> models;
  for (std::string text; std::getline(in, text);) {
    std::istringstream line(text);
    std::string tag;
    line >> tag;
    if (tag == "model") {
      models.emplace_back();
      line >> models.back().name >> models.back().groups;
    } else if (tag == "param") {
      GoldenParam p;
      line >> p.name >> p.group >> p.lr_scale >> p.weight_decay;
      models.back().params.push_back(p);
    }
  }
  return models;
}

OptimizerConfig LayerDecayConfig() {
  OptimizerConfig config;  // The golden script's values.
  config.lr = 0.002;
  config.weight_decay = 0.05;
  config.layer_decay = 0.75;
  return config;
}

TEST(LayerDecayTest, GroupsScalesAndWeightDecayEqualTimms) {
  const std::vector<GoldenModel> golden = ReadGolden();
  ASSERT_EQ(golden.size(), 2u);
  for (const GoldenModel& g : golden) {
    SCOPED_TRACE(g.name);
    auto arch = LookupModel(g.name);
    ASSERT_TRUE(arch.ok()) << arch.status();
    auto model = CreateModel(*arch);
    const std::vector<ParamGroup> groups = TimmParamGroups(*model, LayerDecayConfig());
    ASSERT_EQ(groups.size(), g.groups);
    std::map<std::string, size_t> group_of;
    for (size_t i = 0; i < groups.size(); ++i) {
      for (const std::string& name : groups[i].names) group_of[name] = i;
    }
    ASSERT_EQ(group_of.size(), g.params.size());
    for (const GoldenParam& p : g.params) {
      ASSERT_EQ(group_of.count(p.name), 1u) << p.name;
      const ParamGroup& group = groups[group_of[p.name]];
      EXPECT_EQ(group_of[p.name], p.group) << p.name;
      // 0.75^k = 3^k / 4^k is exact in a double for k <= 33 (3^k < 2^53): equal bits.
      EXPECT_EQ(group.lr_scale, p.lr_scale) << p.name;
      EXPECT_EQ(group.weight_decay, p.weight_decay) << p.name;
    }
  }
}

// timm's Scheduler sets each group's rate to the base rate times its lr_scale.
TEST(LayerDecayTest, TheScheduleScalesEachGroupsRate) {
  auto model = CreateModel(*LookupModel("vit_tiny_patch16_224"));
  std::vector<double> scales;
  auto adamw = MakeAdamW(*model, LayerDecayConfig(), &scales);
  ASSERT_EQ(scales.size(), adamw->param_groups().size());
  SetLearningRate(*adamw, 1e-3, scales);
  for (size_t g = 0; g < scales.size(); ++g) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(adamw->param_groups()[g].options());
    EXPECT_DOUBLE_EQ(options.lr(), 1e-3 * scales[g]);
  }
  // ViT-Ti: stem, 12 blocks, head: 14 layers; the head trains at the full rate, the stem at 0.75^13.
  EXPECT_DOUBLE_EQ(*std::max_element(scales.begin(), scales.end()), 1.0);
  EXPECT_DOUBLE_EQ(*std::min_element(scales.begin(), scales.end()), std::pow(0.75, 13));
}

// Without layer_decay: timm's two groups, at the schedule's rate.
TEST(LayerDecayTest, OffKeepsTheTwoWeightDecayGroups) {
  auto model = CreateModel(*LookupModel("vit_tiny_patch16_224"));
  OptimizerConfig config = LayerDecayConfig();
  config.layer_decay = 0.0;
  const std::vector<ParamGroup> groups = TimmParamGroups(*model, config);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].weight_decay, 0.05);
  EXPECT_EQ(groups[1].weight_decay, 0.0);
  EXPECT_EQ(groups[0].lr_scale, 1.0);
  EXPECT_EQ(groups[1].lr_scale, 1.0);
}

// timm's group_with_matcher on names alone: a MATCH_PREV_GROUP suffix joins the layer sorted before it.
TEST(LayerDecayTest, LayerIdsFollowTimmsSortedKeys) {
  const LayerGroupMatcher matcher = {
      {0, R"(^stem)", {}}, {1, R"(^blocks\.(\d+))", {}}, {1, R"(^norm)", {kMatchPreviousGroup}}};
  EXPECT_EQ(LayerIds({"head.w", "blocks.10.w", "norm.w", "blocks.2.w", "stem.w"}, matcher),
            (std::vector<int>{3, 2, 2, 1, 0}));
}

}  // namespace
}  // namespace nmsparse
