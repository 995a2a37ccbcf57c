// Lion against timm.optim.Lion itself: worker/trainer/testdata/timm_lion.txt is printed by
// tools/timm_lion_golden.py (timm 1.0.31; tools/check_timm_goldens.sh regenerates and compares it). Every
// step's parameter and momentum, for both of timm's code paths and two settings.
#include "worker/trainer/optim/lion.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nmsparse {
namespace {

torch::Tensor Read(std::istringstream& words, int n) {
  std::vector<float> v(n);
  for (float& x : v) words >> x;
  return torch::tensor(v);
}

// Element-wise fp32 ops in either order of rounding: within 2 ulp of values below 1.5 (4e-7), and the
// momentum likewise. A wrong sign moves a weight by 2 lr (>= 4e-4): far outside.
void ExpectClose(const torch::Tensor& a, const torch::Tensor& e, const std::string& what) {
  EXPECT_LE((a - e).abs().max().item<float>(), 5e-7f) << what;
}

TEST(LionTest, MatchesTimmStepByStep) {
  std::ifstream in("worker/trainer/testdata/timm_lion.txt");
  ASSERT_TRUE(in.good()) << "worker/trainer/testdata/timm_lion.txt missing";
  torch::Tensor param, exp_avg;
  LionHyper hyper;
  int steps = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag, kind;
    int foreach = 0;
    words >> tag >> hyper.lr >> hyper.beta1 >> hyper.beta2 >> hyper.weight_decay >> foreach >> kind;
    if (kind == "init") {
      param = Read(words, 8);
      exp_avg = torch::zeros_like(param);
      continue;
    }
    const torch::Tensor grad = Read(words, 8);
    LionUpdate(param, grad, exp_avg, hyper);
    ExpectClose(param, Read(words, 8), line.substr(0, 40) + " param");
    ExpectClose(exp_avg, Read(words, 8), line.substr(0, 40) + " exp_avg");
    ++steps;
  }
  EXPECT_EQ(steps, 80);
}

// A tiny model's parameters with fixed gradients, for the optimizer tests below.
struct Fixture {
  torch::nn::Linear layer{torch::nn::LinearOptions(4, 3)};
  Fixture() {
    torch::manual_seed(3);
    layer->reset_parameters();
  }
  void SetGrads(int step) {
    torch::manual_seed(100 + step);
    for (auto& p : layer->parameters()) p.mutable_grad() = torch::randn_like(p);
  }
};

Lion MakeLionOver(Fixture& f, double weight_decay) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{f.layer->weight},
                      std::make_unique<LionOptions>(LionOptions(1e-2).weight_decay(weight_decay)));
  groups.emplace_back(std::vector<torch::Tensor>{f.layer->bias}, std::make_unique<LionOptions>(1e-2));
  return Lion(std::move(groups), LionOptions(1e-2));
}

// The optimizer applies LionUpdate (proved against timm above) to each group with that group's settings.
TEST(LionTest, OptimizerStepsEachGroupWithItsSettings) {
  Fixture f;
  Lion lion = MakeLionOver(f, 0.1);
  torch::Tensor w = f.layer->weight.detach().clone(), b = f.layer->bias.detach().clone();
  torch::Tensor mw = torch::zeros_like(w), mb = torch::zeros_like(b);
  for (int step = 0; step < 3; ++step) {
    f.SetGrads(step);
    LionUpdate(w, f.layer->weight.grad(), mw, {1e-2, 0.9, 0.99, 0.1});
    LionUpdate(b, f.layer->bias.grad(), mb, {1e-2, 0.9, 0.99, 0.0});
    lion.step();
  }
  EXPECT_TRUE(torch::equal(f.layer->weight, w));
  EXPECT_TRUE(torch::equal(f.layer->bias, b));
}

// The loss scaler's found-inf flag: 1 leaves weights and momentum as they were; 0 updates as without the
// flag, within the rounding of the two formulations: (1 - lr wd) as one double rounded to float, against
// 1 + float(-lr wd) in float (one rounding each: 2 ulp of a weight below 1, and of the momentum).
TEST(LionTest, FoundInfFlagSkipsOnTheDeviceWithoutAHostRead) {
  Fixture skipped, flagged, plain;
  Lion a = MakeLionOver(skipped, 0.1), b = MakeLionOver(flagged, 0.1), c = MakeLionOver(plain, 0.1);
  for (Fixture* f : {&skipped, &flagged, &plain}) f->SetGrads(0);
  a.Update(torch::zeros({1}));
  b.Update(torch::zeros({1}));
  c.step();
  const torch::Tensor before = skipped.layer->weight.detach().clone();
  for (Fixture* f : {&skipped, &flagged, &plain}) f->SetGrads(1);
  a.Update(torch::ones({1}));
  EXPECT_TRUE(torch::equal(skipped.layer->weight, before));
  b.Update(torch::zeros({1}));
  c.step();
  const float ulp = std::nextafter(1.0f, 2.0f) - 1.0f;
  EXPECT_LE((flagged.layer->weight - plain.layer->weight).abs().max().item<float>(), 2 * ulp);
  EXPECT_LE((flagged.layer->bias - plain.layer->bias).abs().max().item<float>(), 2 * ulp);
  EXPECT_FALSE(torch::equal(flagged.layer->weight, before));
}

// Checkpoints keep Lion's momentum: a restored optimizer takes the same next step. As for LibTorch's own
// optimizers, the groups' settings are not restored (the trainer rebuilds them from the spec).
TEST(LionTest, SaveAndLoadKeepTheMomentum) {
  Fixture f;
  Lion lion = MakeLionOver(f, 0.1);
  f.SetGrads(0);
  lion.step();
  torch::serialize::OutputArchive out;
  lion.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);

  Fixture g;
  g.layer->weight.set_data(f.layer->weight.detach().clone());
  g.layer->bias.set_data(f.layer->bias.detach().clone());
  Lion restored = MakeLionOver(g, 0.1);
  torch::serialize::InputArchive in;
  std::istringstream read(bytes.str());
  in.load_from(read);
  restored.load(in);
  f.SetGrads(1);
  g.SetGrads(1);
  lion.step();
  restored.step();
  EXPECT_TRUE(torch::equal(f.layer->weight, g.layer->weight));
  EXPECT_TRUE(torch::equal(f.layer->bias, g.layer->bias));
}

}  // namespace
}  // namespace nmsparse
