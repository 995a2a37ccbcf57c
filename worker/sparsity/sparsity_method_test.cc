// The two variants behind SparsityMethod on a real (tiny) ViT: what each reports, keeps in checkpoints and
// describes, and that the factory picks the dynamic variant exactly when the spec has dynamic groups.
#include "worker/sparsity/sparsity_method.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>

#include "schemas/model_catalog.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {
namespace {

std::shared_ptr<ClassifierImpl> TinyVit() {
  auto arch = LookupModel("vit_nano_patch7_28");
  EXPECT_TRUE(arch.ok());
  return CreateModel(*arch);
}

std::map<std::string, double> Numbers(const SparsityReport& report) {
  return {report.numbers.begin(), report.numbers.end()};
}

std::map<std::string, std::string> Labels(const SparsityReport& report) {
  return {report.labels.begin(), report.labels.end()};
}

TEST(SparsityMethodTest, NMRecipeReportsItsStageAndMeasuredSparsity) {
  torch::manual_seed(1);
  auto model = TinyVit();
  SparsityConfig config;
  config.sparsity_type = SparsityType::kSrste;
  config.nm = {1, 4};
  config.dense_fraction = 0.5;  // Epoch 0 of 2 dense, epoch 1 sparse.
  auto method =
      CreateSparsityMethod(config, *model, SparsityMethodOptions(/*total_epochs=*/2, /*steps_per_epoch=*/5));
  ASSERT_TRUE(method.ok()) << method.status();
  SparsityMethod& m = **method;

  m.BeginStep(0, 0);
  EXPECT_EQ(Labels(m.Report(0, false))["phase"], "dense");
  EXPECT_EQ(Numbers(m.Report(0, false)).count("sparsity/ff"), 0u) << "per-layer figures only on request";

  m.BeginStep(1, 5);
  const SparsityReport sparse = m.Report(5, /*per_layer=*/true);
  EXPECT_EQ(Labels(sparse)["phase"], "sparse");
  EXPECT_EQ(Labels(sparse)["nm_stage"], "1:4");
  EXPECT_DOUBLE_EQ(Numbers(sparse)["sparsity/ff"], 0.75);
  EXPECT_DOUBLE_EQ(Numbers(sparse)["target_sparsity/ff"], 0.75);

  EXPECT_TRUE(m.StateDict().empty());
  EXPECT_TRUE(m.LoadStateDict({}).ok());
  const absl::Status refused = m.LoadStateDict({{"blocks.0.mlp.fc1.weight", torch::ones({4})}});
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("sparsity.dynamic"), std::string::npos) << refused.message();

  const std::string plan = m.Describe(2, 5);
  EXPECT_NE(plan.find("from epoch 1: phase sparse, N:M 1:4"), std::string::npos) << plan;
  EXPECT_NE(plan.find("blocks.0.mlp.fc1 [ff]"), std::string::npos) << plan;
}

// Issue 40: the plan's count and its list agree: a fused qkv weight is one sparse layer listed once per Q, K
// and V block, and the header says so (it read "sparse layers: 6" above 10 lines).
TEST(SparsityMethodTest, DescribeCountsLayersAndTheBlocksItLists) {
  auto model = TinyVit();  // Depth 2: fc1, fc2 and qkv in each block.
  SparsityConfig config;
  config.sparsity_type = SparsityType::kSrste;
  config.locations = {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK,
                      SparsityLocation::kV};
  auto method = CreateSparsityMethod(config, *model, SparsityMethodOptions(/*total_epochs=*/1, 5));
  ASSERT_TRUE(method.ok()) << method.status();
  const std::string plan = (*method)->Describe(1, 5);
  EXPECT_EQ(
      plan.rfind("sparse layers: 6 (10 weight blocks below: a fused qkv weight counts once per block)\n", 0),
      0u)
      << plan;
}

// What each recipe's forward and input-gradient GEMMs multiply (docs/sparsity-method.md §10): a hard mask its
// N:M share, a decaying mask (D > 0) all of W, a dense phase all of W, an SDGF stage its own share.
GemmDensity DensityAt(SparsityConfig config, int epoch, int64_t step) {
  auto model = TinyVit();
  auto method = CreateSparsityMethod(config, *model, SparsityMethodOptions(/*total_epochs=*/4, 10));
  EXPECT_TRUE(method.ok()) << method.status();
  (*method)->BeginStep(epoch, step);
  return (*method)->ForwardDensity();
}

TEST(SparsityMethodTest, ForwardDensityFollowsTheRecipe) {
  SparsityConfig ste;
  ste.sparsity_type = SparsityType::kStructuredNM;
  ste.nm = ste.nm_qkv = {1, 4};
  EXPECT_DOUBLE_EQ(DensityAt(ste, 1, 10).ff, 0.25);
  SparsityConfig srste = ste;
  srste.sparsity_type = SparsityType::kSrste;
  srste.dense_fraction = 0.25;  // Epoch 0 dense.
  EXPECT_DOUBLE_EQ(DensityAt(srste, 0, 5).ff, 1.0);
  EXPECT_DOUBLE_EQ(DensityAt(srste, 1, 10).ff, 0.25);
  SparsityConfig mdgf = ste;
  mdgf.decay_type = DecayType::kLinear;
  mdgf.decay_coef = 0.05;  // D = 1 - 0.05 j: positive up to j = 20, 0 from there.
  EXPECT_DOUBLE_EQ(DensityAt(mdgf, 1, 19).ff, 1.0);
  EXPECT_DOUBLE_EQ(DensityAt(mdgf, 2, 20).ff, 0.25);
  SparsityConfig sdgf = ste;
  sdgf.structure_decay_flag = true;  // SPARSIFY of 1:4: 3:4, 2:4, 1:4 from epochs 0, 1, 2.
  EXPECT_DOUBLE_EQ(DensityAt(sdgf, 0, 0).ff, 0.75);
  EXPECT_DOUBLE_EQ(DensityAt(sdgf, 1, 10).ff, 0.5);
  EXPECT_DOUBLE_EQ(DensityAt(sdgf, 3, 30).qkv, 0.25);
}

TEST(SparsityMethodTest, DynamicGroupsPickTheControllerAndCheckpointItsMasks) {
  torch::manual_seed(2);
  auto model = TinyVit();
  torch::optim::AdamW optimizer(model->parameters());
  SparsityConfig config;
  DynamicSparsityGroup group;
  group.sparsity = StepSchedule::Constant(0.5);
  group.param_filter = {"blocks.*.mlp.fc1.weight"};
  config.dynamic = {group};
  const SparsityMethodOptions options = SparsityMethodOptions(2, 5).optimizer(&optimizer).seed(7);
  auto method = CreateSparsityMethod(config, *model, options);
  ASSERT_TRUE(method.ok()) << method.status();
  SparsityMethod& m = **method;

  m.BeginStep(0, 0);
  m.AfterBackward(0);
  m.AfterOptimizerStep(0);
  const std::map<std::string, double> numbers = Numbers(m.Report(1, false));
  EXPECT_NEAR(numbers.at("sparsity/blocks.0.mlp.fc1.weight"), 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(numbers.at("target_sparsity/blocks.0.mlp.fc1.weight"), 0.5);
  EXPECT_TRUE(Labels(m.Report(1, true)).empty()) << "no N:M phase in a dynamic run";

  const NamedTensors masks = m.StateDict();
  ASSERT_FALSE(masks.empty());
  EXPECT_EQ(masks.front().first, "blocks.0.mlp.fc1.weight");
  EXPECT_TRUE(m.LoadStateDict(masks).ok());
  EXPECT_NE(m.Describe(2, 5).find("blocks.0.mlp.fc1.weight"), std::string::npos);

  config.dynamic[0].param_filter = {"blocks.*.nothing"};
  const auto refused = CreateSparsityMethod(config, *model, options);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("sparsity.dynamic[0].param_filter[0]"), std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace nmsparse
