#include "worker/sparsity/sparsity_engine.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

// A tiny model with timm's module names: patch_embed.proj, blocks.i.attn.{qkv,proj}, blocks.i.mlp.{fc1,fc2},
// head. The forward is not attention, just a chain through every layer, enough for gradients to flow.
struct TinyBlockImpl : torch::nn::Module {
  TinyBlockImpl(int64_t dim, int64_t hidden) {
    attn = register_module("attn", std::make_shared<torch::nn::Module>());
    qkv = attn->register_module("qkv", SparseLinear(dim, 3 * dim));
    proj = attn->register_module("proj", SparseLinear(dim, dim));
    mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    fc1 = mlp->register_module("fc1", SparseLinear(dim, hidden));
    fc2 = mlp->register_module("fc2", SparseLinear(hidden, dim));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto parts = qkv(x).chunk(3, -1);
    x = x + proj(parts[0] * parts[1] + parts[2]);
    return x + fc2(torch::gelu(fc1(x)));
  }
  std::shared_ptr<torch::nn::Module> attn, mlp;
  SparseLinear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TinyBlock);

struct TinyVitImpl : torch::nn::Module {
  explicit TinyVitImpl(int64_t dim = 16, int64_t hidden = 64, int depth = 2) {
    patch_embed = register_module("patch_embed", std::make_shared<torch::nn::Module>());
    patch_proj = patch_embed->register_module("proj", SparseConv2d(SparseConv2dOptions(4, dim, 2).stride(2)));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < depth; ++i) blocks->push_back(TinyBlock(dim, hidden));
    head = register_module("head", torch::nn::Linear(dim, 3));
  }
  torch::Tensor forward(torch::Tensor images) {
    torch::Tensor x = patch_proj(images).flatten(2).transpose(1, 2);
    for (const auto& block : *blocks) x = block->as<TinyBlock>()->forward(x);
    return head(x.mean(1));
  }
  std::shared_ptr<torch::nn::Module> patch_embed;
  SparseConv2d patch_proj{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(TinyVit);

SparsityConfig Config(SparsityType type, std::vector<SparsityLocation> locs) {
  SparsityConfig config;
  config.sparsity_type = type;
  config.locations = std::move(locs);
  return config;
}

std::unique_ptr<SparsityEngine> MakeEngine(const SparsityConfig& config, TinyVit& model, int epochs = 10,
                                           int64_t steps_per_epoch = 5) {
  auto engine = SparsityEngine::Create(config, epochs, steps_per_epoch, *model);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

const LayerRule& RuleOf(const SparseLinear& layer) { return *layer->rule(); }
TinyBlock Block(TinyVit& model, int i) {
  return TinyBlock(std::dynamic_pointer_cast<TinyBlockImpl>(model->blocks->ptr(i)));
}

TEST(SparsityEngineTest, AttachesRulesByTimmName) {
  TinyVit model;
  const SparsityConfig config =
      Config(SparsityType::kStructuredNM, {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK,
                                           SparsityLocation::kV, SparsityLocation::kO, SparsityLocation::kC});
  auto engine = MakeEngine(config, model);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->SparseLayerNames(),
            (std::vector<std::string>{"patch_embed.proj", "blocks.0.attn.qkv", "blocks.0.attn.proj",
                                      "blocks.0.mlp.fc1", "blocks.0.mlp.fc2", "blocks.1.attn.qkv",
                                      "blocks.1.attn.proj", "blocks.1.mlp.fc1", "blocks.1.mlp.fc2"}));
  TinyBlock block = Block(model, 0);
  EXPECT_EQ(RuleOf(block->qkv).blocks.size(), 3u);
  EXPECT_TRUE(model->patch_proj->rule()->is_conv);
  // Until the first BeginStep every rule is dense.
  EXPECT_EQ(RuleOf(block->fc1).recipe, Recipe::kDense);
}

TEST(SparsityEngineTest, OnlyConfiguredLocations) {
  TinyVit model;
  auto engine = MakeEngine(Config(SparsityType::kStructuredNM, {SparsityLocation::kFF}), model);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->SparseLayerNames().size(), 4u);
  EXPECT_EQ(Block(model, 0)->qkv->rule(), nullptr);
  EXPECT_EQ(model->patch_proj->rule(), nullptr);
}

TEST(SparsityEngineTest, DenseRecipeAttachesNothing) {
  TinyVit model;
  auto engine = MakeEngine(Config(SparsityType::kDense, {SparsityLocation::kFF}), model);
  ASSERT_NE(engine, nullptr);
  engine->BeginStep(3, 17);
  EXPECT_TRUE(engine->SparseLayerNames().empty());
  EXPECT_EQ(engine->Summary().phase, "dense");
  EXPECT_EQ(engine->Summary().nm, "dense");
}

TEST(SparsityEngineTest, MdgfLinearPhasesAndDecay) {
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF});
  config.decay_type = DecayType::kLinear;
  config.decay_coef = 0.01;
  config.dense_fraction = 0.2;      // Epochs 0, 1 dense.
  config.fine_tune_fraction = 0.3;  // Epochs > 7 fine-tune.
  config.nm = {1, 8};
  auto engine = MakeEngine(config, model, 10, 5);
  ASSERT_NE(engine, nullptr);
  const LayerRule& rule = RuleOf(Block(model, 1)->fc2);
  engine->BeginStep(1, 9);
  EXPECT_EQ(rule.recipe, Recipe::kDense);
  EXPECT_EQ(engine->Summary().phase, "dense");
  engine->BeginStep(2, 10);
  EXPECT_EQ(rule.recipe, Recipe::kDecay);
  EXPECT_EQ(rule.decay, 1.f);
  EXPECT_EQ(rule.blocks[0].nm, (NM{1, 8}));
  engine->BeginStep(2, 13);
  EXPECT_EQ(rule.decay, static_cast<float>(1.0 - 0.01 * 3));
  EXPECT_EQ(engine->Summary().sparse_step, 3);
  EXPECT_EQ(engine->Summary().nm, "1:8");
  engine->BeginStep(7, 39);
  EXPECT_EQ(rule.decay, static_cast<float>(1.0 - 0.01 * 29));
  EXPECT_EQ(engine->Summary().phase, "sparse");
  engine->BeginStep(8, 40);
  EXPECT_EQ(rule.decay, 0.f);
  EXPECT_EQ(rule.recipe, Recipe::kDecay);
  EXPECT_EQ(engine->Summary().phase, "fine_tune");
}

TEST(SparsityEngineTest, ExpDecayAndSrsteRules) {
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF});
  config.decay_type = DecayType::kExp;
  auto engine = MakeEngine(config, model, 10, 1000);
  ASSERT_NE(engine, nullptr);
  engine->BeginStep(2, 2500);
  EXPECT_EQ(RuleOf(Block(model, 0)->fc1).decay, static_cast<float>(std::exp(-2e-4 * 2500)));

  TinyVit other;
  SparsityConfig srste = Config(SparsityType::kSrste, {SparsityLocation::kFF});
  srste.srste_lambda = 3e-4;
  srste.structure_decay_flag = true;  // Ignored by SR-STE.
  srste.nm = {1, 8};
  auto srste_engine = MakeEngine(srste, other);
  ASSERT_NE(srste_engine, nullptr);
  srste_engine->BeginStep(0, 0);
  const LayerRule& rule = RuleOf(Block(other, 0)->fc1);
  EXPECT_EQ(rule.recipe, Recipe::kSrste);
  EXPECT_EQ(rule.srste_lambda, 3e-4);
  EXPECT_EQ(rule.blocks[0].nm, (NM{1, 8}));
  EXPECT_EQ(srste_engine->Summary().decay, 0.0);
}

TEST(SparsityEngineTest, StructureDecayStagesPerLocationGroup) {
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM,
                                 {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK});
  config.structure_decay_flag = true;
  config.structure_decay_type = StructureDecayType::kSparsify;
  config.nm = {1, 8};      // 7:8, 4:8, 2:8, 1:8 at epochs 0, 25, 50, 75 of 100.
  config.nm_qkv = {2, 4};  // 3:4, 2:4 at epochs 0, 50.
  auto engine = MakeEngine(config, model, 100, 2);
  ASSERT_NE(engine, nullptr);
  TinyBlock block = Block(model, 0);
  engine->BeginStep(30, 60);
  EXPECT_EQ(RuleOf(block->fc1).blocks[0].nm, (NM{4, 8}));
  EXPECT_EQ(RuleOf(block->qkv).blocks[0].nm, (NM{3, 4}));
  EXPECT_TRUE(RuleOf(block->qkv).blocks[1].sparse);
  EXPECT_FALSE(RuleOf(block->qkv).blocks[2].sparse);  // V not configured.
  EXPECT_EQ(engine->Summary().nm, "4:8");
  EXPECT_EQ(engine->Summary().nm_qkv, "3:4");
  engine->BeginStep(99, 198);
  EXPECT_EQ(RuleOf(block->fc1).blocks[0].nm, (NM{1, 8}));
  EXPECT_EQ(RuleOf(block->qkv).blocks[1].nm, (NM{2, 4}));
}

// Cooldown epochs (issue 24): the stages divide the span (schedule.epochs, as the reference's total_epochs),
// the last one holds after it, and the cooldown epochs are hard-mask fine-tune epochs (f = 0: after epoch T).
TEST(SparsityEngineTest, StructureDecayStagesDivideTheSpanNotTheCooldown) {
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF});
  config.structure_decay_flag = true;
  config.structure_decay_type = StructureDecayType::kSparsify;
  config.nm = {1, 8};  // 7:8, 4:8, 2:8, 1:8 at epochs 0, 25, 50, 75 of 100 (of the 110 trained).
  auto made = SparsityEngine::Create(config, /*total_epochs=*/110, /*steps_per_epoch=*/2, *model,
                                     /*span_epochs=*/100);
  ASSERT_TRUE(made.ok()) << made.status();
  SparsityEngine& engine = **made;
  TinyBlock block = Block(model, 0);
  engine.BeginStep(75, 150);
  EXPECT_EQ(RuleOf(block->fc1).blocks[0].nm, (NM{1, 8}));  // Over 110 epochs it would start at 82.
  EXPECT_EQ(engine.Summary().phase, "sparse");
  engine.BeginStep(100, 200);
  EXPECT_EQ(engine.Summary().phase, "sparse");  // Epoch T: 100 > 100 - 0 is false.
  engine.BeginStep(109, 219);
  EXPECT_EQ(RuleOf(block->fc1).blocks[0].nm, (NM{1, 8}));
  EXPECT_EQ(engine.Summary().phase, "fine_tune");
  EXPECT_EQ(engine.Summary().decay, 0.0);
}

TEST(SparsityEngineTest, ResumedEngineSetsIdenticalRules) {
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF, SparsityLocation::kQ,
                                                               SparsityLocation::kV, SparsityLocation::kC});
  config.decay_type = DecayType::kLinear;
  config.decay_coef = 0.003;
  config.structure_decay_flag = true;
  config.structure_decay_type = StructureDecayType::kFine;
  config.nm = {1, 4};
  config.dense_fraction = 0.2;
  config.fine_tune_fraction = 0.2;
  torch::manual_seed(3);
  TinyVit stepped;
  TinyVit resumed;
  {
    torch::NoGradGuard no_grad;
    auto src = stepped->parameters();
    auto dst = resumed->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  auto a = MakeEngine(config, stepped, 10, 4);
  ASSERT_NE(a, nullptr);
  for (int64_t step = 0; step < 10 * 4; ++step) {
    const int epoch = static_cast<int>(step / 4);
    a->BeginStep(epoch, step);
    if (step % 7 != 3) continue;
    auto b = MakeEngine(config, resumed, 10, 4);
    ASSERT_NE(b, nullptr);
    b->BeginStep(epoch, step);
    for (int i = 0; i < 2; ++i) {
      for (auto [x, y] : {std::pair{Block(stepped, i)->fc1, Block(resumed, i)->fc1},
                          {Block(stepped, i)->qkv, Block(resumed, i)->qkv}}) {
        const LayerRule& ra = RuleOf(x);
        const LayerRule& rb = RuleOf(y);
        EXPECT_EQ(ra.recipe, rb.recipe) << step;
        EXPECT_EQ(ra.decay, rb.decay) << step;
        for (size_t k = 0; k < ra.blocks.size(); ++k) EXPECT_EQ(ra.blocks[k].nm, rb.blocks[k].nm) << step;
        EXPECT_TRUE(torch::equal(x->EffectiveWeight(), y->EffectiveWeight())) << step;
      }
    }
    EXPECT_EQ(a->Summary().phase, b->Summary().phase);
    EXPECT_EQ(a->Summary().nm, b->Summary().nm);
    EXPECT_EQ(a->Summary().decay, b->Summary().decay);
  }
}

TEST(SparsityEngineTest, ReportsActualZeros) {
  torch::manual_seed(4);
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM,
                                 {SparsityLocation::kFF, SparsityLocation::kQ, SparsityLocation::kK});
  config.nm = {1, 4};
  config.nm_qkv = {2, 4};
  auto engine = MakeEngine(config, model);
  ASSERT_NE(engine, nullptr);
  engine->BeginStep(0, 0);  // STEP: hard mask.
  const std::vector<SparseLayerReport> reports = engine->Report();
  ASSERT_EQ(reports.size(), 2u * (2 + 3));
  for (const SparseLayerReport& r : reports) {
    SCOPED_TRACE(r.name + " " + r.location);
    if (r.location == "ff") {
      EXPECT_EQ(r.target, "1:4");
      EXPECT_DOUBLE_EQ(r.zero_fraction, 0.75);
    } else if (r.location == "v") {
      EXPECT_EQ(r.target, "dense");
      EXPECT_EQ(r.zero_fraction, 0.0);
      EXPECT_EQ(r.decay, 1.0);
    } else {
      EXPECT_EQ(r.target, "2:4");
      EXPECT_EQ(r.shape, (std::vector<int64_t>{16, 16}));
      EXPECT_DOUBLE_EQ(r.zero_fraction, 0.5);
      EXPECT_EQ(r.decay, 0.0);
    }
  }
  const std::vector<LocationReport> by_location = engine->ReportByLocation();
  ASSERT_EQ(by_location.size(), 4u);  // q, k, v, ff in module order.
  EXPECT_EQ(by_location[0].location, "q");
  EXPECT_EQ(by_location[3].location, "ff");
  EXPECT_EQ(by_location[3].numel, 2 * 2 * 16 * 64);
  EXPECT_DOUBLE_EQ(by_location[3].zero_fraction, 0.75);
}

TEST(SparsityEngineTest, TrainingStepUpdatesPrunedWeightsThroughTheStraightThroughGradient) {
  torch::manual_seed(5);
  TinyVit model;
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF, SparsityLocation::kC});
  auto engine = MakeEngine(config, model);
  ASSERT_NE(engine, nullptr);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  const torch::Tensor before = Block(model, 0)->fc1->weight.clone();
  engine->BeginStep(0, 0);
  const torch::Tensor loss =
      torch::nn::functional::cross_entropy(model->forward(torch::randn({2, 4, 8, 8})), torch::tensor({0, 2}));
  optimizer.zero_grad();
  loss.backward();
  optimizer.step();
  ASSERT_TRUE(std::isfinite(loss.item<float>()));
  // Every weight moved, pruned ones included (AdamW moves any weight with a non-zero gradient).
  EXPECT_TRUE(Block(model, 0)->fc1->weight.ne(before).all().item<bool>());
  EXPECT_TRUE(model->patch_proj->weight.grad().ne(0).any().item<bool>());
}

// Evaluation (eval mode, no grad) computes W~ once and reuses it across batches; an optimizer step, a new
// rule or the next training forward makes it compute W~ again, so evaluation always sees the current weights.
TEST(SparsityEngineTest, EvaluationReusesWTildeUntilWeightsOrRulesChange) {
  torch::manual_seed(6);
  TinyVit model;
  auto engine =
      MakeEngine(Config(SparsityType::kSrste, {SparsityLocation::kFF, SparsityLocation::kC}), model);
  ASSERT_NE(engine, nullptr);
  engine->BeginStep(0, 0);
  const torch::Tensor images = torch::randn({2, 4, 8, 8});
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  auto evaluate = [&] {
    torch::NoGradGuard no_grad;
    model->eval();
    torch::Tensor out = model->forward(images);
    model->train();
    return out;
  };
  const torch::Tensor fresh = evaluate();
  {
    torch::NoGradGuard no_grad;
    model->eval();
    SparseLinear fc1 = Block(model, 0)->fc1;
    const torch::Tensor first = model->forward(images);
    EXPECT_TRUE(first.equal(fresh));
    // An update that bypasses the version counter (.data()) is invisible to the cache: the proof that the
    // second batch reused W~ rather than recomputing it.
    fc1->weight.data().mul_(-1);
    EXPECT_TRUE(model->forward(images).equal(first));
    fc1->weight.data().mul_(-1);
    // An in-place update through the parameter (as an optimizer step or a checkpoint load) is seen.
    fc1->weight.mul_(2);
    EXPECT_FALSE(model->forward(images).equal(first));
    fc1->weight.div_(2);
    EXPECT_TRUE(model->forward(images).equal(first));
    model->train();
  }
  // A training step: the next evaluation sees the new weights (the cache went with the training forward).
  const torch::Tensor loss =
      torch::nn::functional::cross_entropy(model->forward(images), torch::tensor({0, 2}));
  optimizer.zero_grad();
  loss.backward();
  optimizer.step();
  const torch::Tensor after_step = evaluate();
  EXPECT_FALSE(after_step.equal(fresh));
  // And a new rule (the next step's) is seen even in eval mode with no training forward in between.
  engine->BeginStep(1, 5);
  Block(model, 0)->fc1->set_rule(nullptr);
  EXPECT_FALSE(evaluate().equal(after_step));
}

TEST(SparsityEngineTest, ErrorsNameTheLayerAndShape) {
  TinyVit model(16, 20);  // fc1 [20, 16]: 320 weights.
  SparsityConfig config = Config(SparsityType::kStructuredNM, {SparsityLocation::kFF});
  config.nm = {1, 128};  // 320 % 128 != 0.
  auto bad = SparsityEngine::Create(config, 10, 5, *model);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("blocks.0.mlp.fc1"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("[20, 16]"), std::string::npos) << bad.status();

  // The target fits but an SDGF stage does not: FINE 1:16 starts at 8:128.
  config.nm = {1, 16};
  EXPECT_TRUE(SparsityEngine::Create(config, 10, 5, *model).ok());
  config.structure_decay_flag = true;
  config.structure_decay_type = StructureDecayType::kFine;
  auto stage = SparsityEngine::Create(config, 10, 5, *model);
  ASSERT_FALSE(stage.ok());
  EXPECT_NE(stage.status().message().find("8:128"), std::string::npos) << stage.status();

  // A qkv block is validated on its own [dim, dim] shape.
  TinyVit small(4, 16);  // qkv [12, 4]; each block [4, 4] = 16 weights.
  SparsityConfig qkv = Config(SparsityType::kStructuredNM, {SparsityLocation::kQ});
  qkv.nm_qkv = {1, 32};
  auto block = SparsityEngine::Create(qkv, 10, 5, *small);
  ASSERT_FALSE(block.ok());
  EXPECT_NE(block.status().message().find("blocks.0.attn.qkv (q block)"), std::string::npos)
      << block.status();
  EXPECT_NE(block.status().message().find("[4, 4]"), std::string::npos) << block.status();
}

TEST(SparsityEngineTest, LocationsThatMatchNoSparseLayerAreErrors) {
  struct PlainMlp : torch::nn::Module {
    PlainMlp() {
      auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
      mlp->register_module("fc1", torch::nn::Linear(8, 8));
    }
  };
  PlainMlp plain;
  auto not_sparse =
      SparsityEngine::Create(Config(SparsityType::kSrste, {SparsityLocation::kFF}), 10, 5, plain);
  ASSERT_FALSE(not_sparse.ok());
  EXPECT_NE(not_sparse.status().message().find("mlp.fc1"), std::string::npos) << not_sparse.status();
  TinyVit model;
  auto missing = SparsityEngine::Create(Config(SparsityType::kSrste, {SparsityLocation::kO}), 10, 5, *model);
  EXPECT_TRUE(missing.ok());
  torch::nn::Sequential empty;
  auto none = SparsityEngine::Create(Config(SparsityType::kSrste, {SparsityLocation::kFF}), 10, 5, *empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("matches no"), std::string::npos) << none.status();
}

TEST(SparsityEngineTest, SwinNamesAndUnstructured) {
  struct Swin : torch::nn::Module {
    Swin() {
      auto layers = register_module("layers", torch::nn::ModuleList());
      auto stage = std::make_shared<torch::nn::Module>();
      layers->push_back(stage);
      auto blocks = stage->register_module("blocks", torch::nn::ModuleList());
      block = std::make_shared<TinyBlockImpl>(8, 32);
      blocks->push_back(block);
      auto attn = block->attn;
      attn->register_module("cpb_mlp", torch::nn::Sequential(SparseLinear(2, 8)));
      stage->register_module("downsample", std::make_shared<torch::nn::Module>())
          ->register_module("reduction", SparseLinear(32, 16));
    }
    std::shared_ptr<TinyBlockImpl> block;
  };
  Swin swin;
  SparsityConfig config = Config(SparsityType::kUnstructured, {SparsityLocation::kFF, SparsityLocation::kO});
  config.prune_rate = 0.75;
  auto engine = SparsityEngine::Create(config, 10, 5, swin);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->SparseLayerNames(),
            (std::vector<std::string>{"layers.0.blocks.0.attn.proj", "layers.0.blocks.0.mlp.fc1",
                                      "layers.0.blocks.0.mlp.fc2"}));
  (*engine)->BeginStep(0, 0);
  EXPECT_EQ((*engine)->Summary().nm, "unstructured 0.75");
  EXPECT_DOUBLE_EQ(swin.block->fc1->EffectiveWeight().eq(0).to(torch::kDouble).mean().item<double>(), 0.75);
}

}  // namespace
}  // namespace nmsparse
