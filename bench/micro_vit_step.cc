// Forward + backward + AdamW step of vit_micro_patch4_28 on random data (no data loading, no engine): the
// model-only part of nmtrain's throughput, for comparison with the same loop in Python.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "schemas/model_catalog.h"
#include "worker/trainer/models/model_factory.h"

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  auto model = nmsparse::CreateModel(*nmsparse::LookupModel("vit_micro_patch4_28"));
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-3));
  auto x = torch::randn({128, 1, 28, 28});
  auto y = torch::randint(0, 10, {128}, torch::kInt64);
  std::chrono::steady_clock::time_point start;
  for (int i = 0; i < steps + 3; ++i) {
    if (i == 3) start = std::chrono::steady_clock::now();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"impl\":\"libtorch\",\"images_per_s\":%.1f}\n", steps * 128 / s);
}
