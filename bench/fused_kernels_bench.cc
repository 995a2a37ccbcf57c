// The trainer's fused CPU kernels against the ATen composite ops they replace (attention, the whole Mlp,
// GELU), forward + backward, on the activation shapes of vit_micro_patch4_28 at batch 128 and of
// vit_small_patch16_224 at batch 16. Prints milliseconds per call for both and the ratio (ATen / fused: above
// 1 means the fused kernel is faster). Usage: bazel run //bench:fused_kernels_bench -- [REPEATS] [THREADS]
// (NMSPARSE_KERNELS_MAX_ISA=avx2 measures the AVX2 GELU loops on an AVX-512 CPU.)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "worker/trainer/kernels/fused_attention.h"
#include "worker/trainer/kernels/fused_gelu.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/fused_mlp.h"
#include "worker/trainer/kernels/gelu_rows.h"

namespace {

// Median milliseconds of `repeats` runs of forward + backward of fn on a fresh leaf copy of `input`.
double MedianMs(const std::function<torch::Tensor(const torch::Tensor&)>& fn, const torch::Tensor& input,
                int repeats) {
  auto grad = torch::randn_like(fn(input));
  std::vector<double> ms;
  for (int i = 0; i < repeats + 2; ++i) {
    auto leaf = input.detach().clone().requires_grad_(true);
    const auto start = std::chrono::steady_clock::now();
    fn(leaf).backward(grad);
    const auto end = std::chrono::steady_clock::now();
    if (i >= 2) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

void Report(const char* name, const std::function<torch::Tensor(const torch::Tensor&)>& fn,
            const torch::Tensor& input, int repeats) {
  nmsparse::SetFusedKernelsEnabled(false);
  const double aten = MedianMs(fn, input, repeats);
  nmsparse::SetFusedKernelsEnabled(true);
  const double fused = MedianMs(fn, input, repeats);
  std::printf("%-44s ATen %8.3f ms   fused %8.3f ms   ratio %5.2fx\n", name, aten, fused, aten / fused);
}

void AttentionCase(const char* name, int64_t batch, int64_t tokens, int64_t heads, int64_t head_dim,
                   int repeats) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  auto attention = [=](const torch::Tensor& qkv) {
    return nmsparse::FusedAttentionApplies(qkv, heads) ? nmsparse::FusedAttention(qkv, heads, scale)
                                                       : nmsparse::CompositeAttention(qkv, heads, scale);
  };
  Report(name, attention, torch::randn({batch, tokens, 3 * heads * head_dim}), repeats);
}

// fc1 -> GELU -> fc2 with the micro ViT's or ViT-S's widths; the inputs are x and the four parameters.
void MlpCase(const char* name, int64_t batch, int64_t tokens, int64_t dim, int64_t hidden, int repeats) {
  auto w1 = (torch::randn({hidden, dim}) * 0.02).requires_grad_(true);
  auto b1 = torch::zeros({hidden}).requires_grad_(true);
  auto w2 = (torch::randn({dim, hidden}) * 0.02).requires_grad_(true);
  auto b2 = torch::zeros({dim}).requires_grad_(true);
  auto mlp = [=](const torch::Tensor& x) {
    return nmsparse::FusedMlpApplies(x, w1, b1, w2, b2)
               ? nmsparse::FusedMlp(x, w1, b1, w2, b2)
               : torch::linear(nmsparse::Gelu(torch::linear(x, w1, b1)), w2, b2);
  };
  Report(name, mlp, torch::randn({batch, tokens, dim}), repeats);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 30;
  torch::set_num_threads(argc > 2 ? std::atoi(argv[2]) : 1);
  torch::manual_seed(0);
  std::printf("forward + backward, median of %d, %d thread(s), GELU loops %s\n", repeats,
              torch::get_num_threads(), nmsparse::GeluPathName(nmsparse::BestGeluPath()));
  AttentionCase("attention, micro ViT [128, 50, 3x4x16]", 128, 50, 4, 16, repeats);
  AttentionCase("attention, ViT-S/16 [16, 197, 3x6x64]", 16, 197, 6, 64, repeats);
  MlpCase("mlp (fc1, gelu, fc2), micro ViT [128, 50, 64]", 128, 50, 64, 256, repeats);
  MlpCase("mlp (fc1, gelu, fc2), ViT-S/16 [16, 197, 384]", 16, 197, 384, 1536, repeats);
  Report("gelu, micro ViT mlp [128, 50, 256]", nmsparse::Gelu, torch::randn({128, 50, 256}), repeats);
  Report("gelu, ViT-S/16 mlp [16, 197, 1536]", nmsparse::Gelu, torch::randn({16, 197, 1536}), repeats);
}
