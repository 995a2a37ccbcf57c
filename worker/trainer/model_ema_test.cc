// ModelEma against timm's ModelEmaV2 on a fixed sequence of weights (worker/trainer/testdata/timm_ema.txt,
// written by tools/timm_ema_golden.py and checked against PyPI timm by tools/check_timm_goldens.sh), and the
// evaluation of the EMA weights under a sparse layer's mask rule.
#include "worker/trainer/model_ema.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/sparse_linear.h"

namespace nmsparse {
namespace {

struct GoldenStep {
  torch::Tensor weights;  // The model's 8 parameters (weight [2, 3] then bias [2]) before the update.
  torch::Tensor ema;      // timm's EMA after it.
};

struct GoldenRun {
  torch::Tensor init;
  std::vector<GoldenStep> steps;
};

torch::Tensor Floats(std::istringstream& words, int count) {
  std::vector<float> v(count);
  for (float& x : v) words >> x;
  return torch::tensor(v);
}

// Lines "ema DECAY init W..." and "ema DECAY step W... EMA...", by decay.
std::map<std::string, GoldenRun> ReadGolden() {
  std::ifstream in("worker/trainer/testdata/timm_ema.txt");
  std::map<std::string, GoldenRun> runs;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag, decay, kind;
    words >> tag >> decay >> kind;
    if (kind == "init") {
      runs[decay].init = Floats(words, 8);
    } else {
      GoldenStep step;
      step.weights = Floats(words, 8);
      step.ema = Floats(words, 8);
      runs[decay].steps.push_back(step);
    }
  }
  EXPECT_EQ(runs.size(), 2u) << "worker/trainer/testdata/timm_ema.txt missing or incomplete";
  return runs;
}

void SetFlat(torch::nn::Linear& model, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  model->weight.copy_(flat.slice(0, 0, 6).view({2, 3}));
  model->bias.copy_(flat.slice(0, 6));
}

torch::Tensor Flat(const NamedTensors& state) {
  std::vector<torch::Tensor> parts;
  for (const auto& [name, t] : state) parts.push_back(t.reshape(-1));
  return torch::cat(parts);
}

// Tolerance: timm rounds decay * ema and (1 - decay) * w to float32 and then their sum; add_ with alpha may
// fuse the second product into the sum (FMA), saving one rounding of a term far below the EMA's ulp. The two
// sums then round to the same float32 or to neighbours: one ulp of the EMA, 6e-8 at the golden's |ema| < 1,
// and such a difference only shrinks (by `decay`) at later steps.
constexpr double kTolerance = 1e-7;

TEST(ModelEmaTest, EqualsTimmModelEmaV2) {
  for (const auto& [decay, run] : ReadGolden()) {
    SCOPED_TRACE("decay " + decay);
    torch::nn::Linear model(3, 2);
    SetFlat(model, run.init);
    ModelEma ema(*model, std::stod(decay));
    ASSERT_EQ(ema.StateDict()[0].first, "weight");
    for (size_t k = 0; k < run.steps.size(); ++k) {
      SetFlat(model, run.steps[k].weights);
      ema.Update();
      const double diff = (Flat(ema.StateDict()) - run.steps[k].ema).abs().max().item<double>();
      ASSERT_LE(diff, kTolerance) << "step " << k;
    }
    // The EMA moved away from both the start and the latest weights (the test can tell them apart).
    EXPECT_GT((Flat(ema.StateDict()) - run.steps.back().weights).abs().max().item<double>(), 1e-3);
  }
}

TEST(ModelEmaTest, EvaluationAppliesTheMaskRuleToTheEmaWeights) {
  torch::manual_seed(3);
  SparseLinear layer(SparseLinearOptions(8, 4).bias(false));
  LayerRule rule;
  rule.recipe = Recipe::kSrste;
  rule.blocks = {BlockRule{true, NM{2, 4}}};
  layer->set_rule(std::make_shared<LayerRule>(rule));
  ModelEma ema(*layer, 0.5);
  const torch::Tensor trained = torch::randn({4, 8});
  {
    torch::NoGradGuard no_grad;
    layer->weight.copy_(trained);
  }
  ema.Update();  // ema = (start + trained) / 2
  const torch::Tensor ema_weight = ema.StateDict()[0].second.clone();
  const torch::Tensor x = torch::randn({3, 8});
  torch::Tensor raw_out, ema_out;
  layer->eval();
  torch::NoGradGuard no_grad;
  raw_out = layer(x);  // Fills the evaluation cache with the trained weights' W~.
  ema.WithEmaWeights([&] { ema_out = layer(x); });
  const torch::Tensor mask = NMMask(ema_weight, {2, 4}, SparseDim::kRow, false);
  EXPECT_TRUE(torch::allclose(ema_out, torch::nn::functional::linear(x, ema_weight * mask)));
  EXPECT_FALSE(torch::allclose(ema_out, torch::nn::functional::linear(x, ema_weight)));
  // The trained weights are back, and so is their W~.
  EXPECT_TRUE(torch::equal(layer->weight, trained));
  EXPECT_TRUE(torch::allclose(layer(x), raw_out));
}

TEST(ModelEmaTest, LoadRestoresOrRestartsFromTheModel) {
  torch::nn::Linear model(3, 2);
  ModelEma ema(*model, 0.9);
  NamedTensors saved = ema.StateDict();
  for (auto& [name, t] : saved) t = t.clone() + 1.0;
  ASSERT_TRUE(ema.Load(saved).ok());
  EXPECT_TRUE(torch::equal(ema.StateDict()[0].second, model->weight + 1.0));
  ASSERT_TRUE(ema.Load({}).ok());  // A checkpoint without EMA: a copy of the model.
  EXPECT_TRUE(torch::equal(ema.StateDict()[0].second, model->weight));
  saved[0].first = "other";
  EXPECT_FALSE(ema.Load(saved).ok());
}

}  // namespace
}  // namespace nmsparse
