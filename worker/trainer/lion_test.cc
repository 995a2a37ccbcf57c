// Lion against timm.optim.Lion itself: worker/trainer/testdata/timm_lion.txt is printed by
// tools/timm_lion_golden.py (timm 1.0.31; tools/check_timm_goldens.sh regenerates and compares it). Every
// step's parameter and momentum, for both of timm's code paths and two settings.
#include "worker/trainer/lion.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

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

}  // namespace
}  // namespace nmsparse
