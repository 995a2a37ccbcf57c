#include "schemas/validation_memo.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

// Every value ValidateExperiment reads changes the memo's answer where it changes ValidateExperiment's.
TEST(ValidationMemoTest, AnswersAsValidateExperimentDoes) {
  ExperimentConfig c;
  c.model.name = "vit_nano_patch7_28";
  c.data.dataset = "synthetic";
  c.data.batch_size = 32;
  c.sparsity.sparsity_type = SparsityType::kStructuredNM;
  std::vector<ExperimentConfig> configs = {c};
  auto vary = [&](auto change) {
    ExperimentConfig v = c;
    change(&v);
    configs.push_back(v);
  };
  vary([](ExperimentConfig* v) { v->seed = 5; });
  vary([](ExperimentConfig* v) { v->sparsity.nm = {2, 3}; });
  vary([](ExperimentConfig* v) { v->sparsity.nm_qkv = {2, 3}; });
  vary([](ExperimentConfig* v) {
    v->sparsity.nm_qkv = {2, 3};
    v->sparsity.locations = {SparsityLocation::kQ};
  });
  vary([](ExperimentConfig* v) { v->sparsity.sparsity_type = SparsityType::kDense; });
  vary([](ExperimentConfig* v) {
    v->sparsity.nm = {1, 1024};
    v->sparsity.structure_decay_flag = true;
    v->sparsity.structure_decay_type = StructureDecayType::kFine;
  });
  vary([](ExperimentConfig* v) { v->model.name = "vit_nope"; });
  vary([](ExperimentConfig* v) { v->model.img_size = 30; });
  vary([](ExperimentConfig* v) { v->data.dataset = "fashion_mnist"; });
  vary([](ExperimentConfig* v) { v->data.dataset = "shards"; });
  vary([](ExperimentConfig* v) {
    v->data.dataset = "shards";
    v->data.path = "/x";
  });
  vary([](ExperimentConfig* v) { v->resources.gpus = 3; });
  vary([](ExperimentConfig* v) { v->data.batch_size = 33; });
  vary([](ExperimentConfig* v) { v->schedule.warmup_epochs = 2; });
  vary([](ExperimentConfig* v) { v->schedule.epochs = 2; });
  // Dynamic groups (§7): a valid one, one whose filter matches no parameter, one with another schedule.
  DynamicSparsityGroup group;
  group.algorithm = DynamicAlgorithm::kRigl;
  group.sparsity = StepSchedule::Constant(0.9);
  auto dynamic = [&](auto change) {
    vary([&](ExperimentConfig* v) {
      v->sparsity.sparsity_type = SparsityType::kUnstructured;
      v->sparsity.dynamic = {group};
      change(&v->sparsity.dynamic[0]);
    });
  };
  dynamic([](DynamicSparsityGroup*) {});
  dynamic([](DynamicSparsityGroup* g) { g->param_filter = {"no.such.param"}; });
  dynamic([](DynamicSparsityGroup* g) { g->param_filter = {"blocks.*"}; });
  dynamic([](DynamicSparsityGroup* g) { g->sparsity.cycle = {StepSchedule::Constant(0.5)}; });
  dynamic([](DynamicSparsityGroup* g) { g->balance_out_groups = 7; });
  dynamic([](DynamicSparsityGroup* g) { g->update.freq = 0; });
  ValidationMemo memo;
  for (int pass = 0; pass < 2; ++pass) {  // The second pass answers from the memo.
    for (size_t i = 0; i < configs.size(); ++i) {
      EXPECT_EQ(memo.Validate(configs[i]), ValidateExperiment(configs[i])) << "config " << i;
    }
  }
}

}  // namespace
}  // namespace nmsparse
