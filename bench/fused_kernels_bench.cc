// The trainer's fused CPU kernels against the ATen composite ops they replace (attention, the whole Mlp,
// GELU), forward + backward, on the activation shapes of vit_micro_patch4_28 at batch 128 and of
// vit_small_patch16_224 at batch 16; and the softmax rows of the attention alone. Each case runs ATen, the
// fused kernels on their AVX2 path and on their AVX-512 path in interleaved rounds (kernel_isa.h's cap; the
// paths the CPU lacks are left out) and prints median milliseconds per call and the ratios: ATen / fused
// (above 1: the fused kernel is faster) and AVX2 / AVX-512 (above 1: AVX-512 is faster). Usage:
// bazel run //bench:fused_kernels_bench -- [ROUNDS] [THREADS]
#include <malloc.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/interleaved.h"
#include "worker/trainer/kernels/bias_rows.h"
#include "worker/trainer/kernels/fused_attention.h"
#include "worker/trainer/kernels/fused_gelu.h"
#include "worker/trainer/kernels/fused_kernels_switch.h"
#include "worker/trainer/kernels/fused_mlp.h"
#include "worker/trainer/kernels/kernel_isa.h"
#include "worker/trainer/kernels/softmax_rows.h"

namespace {

using nmsparse::KernelIsa;

// The vector paths to compare: AVX2, and AVX-512 where the CPU has it.
std::vector<KernelIsa> Paths() {
  std::vector<KernelIsa> paths = {KernelIsa::kAvx2};
  if (nmsparse::CpuKernelIsa() >= KernelIsa::kAvx512) paths.push_back(KernelIsa::kAvx512);
  return paths;
}

// Runs `body` with the fused kernels on (on `isa`) or off (ATen), and restores the defaults.
std::function<void()> On(bool fused, KernelIsa isa, const std::function<void()>& body) {
  return [=] {
    nmsparse::SetFusedKernelsEnabled(fused);
    nmsparse::SetKernelIsaCap(isa);
    body();
    nmsparse::SetFusedKernelsEnabled(true);
    nmsparse::SetKernelIsaCap(KernelIsa::kAvx512);
  };
}

// Prints one line: each variant's median ms, then ATen / the last path and AVX2 / AVX-512.
void PrintLine(const char* name, const std::vector<double>& ms, bool with_aten) {
  std::printf("%-46s", name);
  size_t i = 0;
  if (with_aten) std::printf(" ATen %8.3f", ms[i++]);
  const std::vector<KernelIsa> paths = Paths();
  for (KernelIsa isa : paths) std::printf("  %s %8.3f", nmsparse::KernelIsaName(isa), ms[i++]);
  if (with_aten) std::printf("   ATen/fused %5.2fx", ms[0] / ms.back());
  if (paths.size() == 2) std::printf("   avx2/avx512 %5.2fx", ms[ms.size() - 2] / ms.back());
  std::printf("\n");
}

// Forward + backward of fn on a fresh leaf copy of `input`: ATen, then each path.
void Report(const char* name, const std::function<torch::Tensor(const torch::Tensor&)>& fn,
            const torch::Tensor& input, int rounds) {
  const torch::Tensor grad = torch::randn_like(fn(input));
  auto step = [=] { fn(input.detach().clone().requires_grad_(true)).backward(grad); };
  std::vector<std::function<void()>> variants = {On(false, KernelIsa::kAvx512, step)};
  for (KernelIsa isa : Paths()) variants.push_back(On(true, isa, step));
  PrintLine(name, nmsparse::bench::InterleavedMedianMs(variants, rounds), true);
}

void AttentionCase(const char* name, int64_t batch, int64_t tokens, int64_t heads, int64_t head_dim,
                   int rounds) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  auto attention = [=](const torch::Tensor& qkv) {
    return nmsparse::FusedAttentionApplies(qkv, heads) ? nmsparse::FusedAttention(qkv, heads, scale)
                                                       : nmsparse::CompositeAttention(qkv, heads, scale);
  };
  Report(name, attention, torch::randn({batch, tokens, 3 * heads * head_dim}), rounds);
}

// fc1 -> GELU -> fc2 with the micro ViT's or ViT-S's widths; the inputs are x and the four parameters.
void MlpCase(const char* name, int64_t batch, int64_t tokens, int64_t dim, int64_t hidden, int rounds) {
  auto w1 = (torch::randn({hidden, dim}) * 0.02).requires_grad_(true);
  auto b1 = torch::zeros({hidden}).requires_grad_(true);
  auto w2 = (torch::randn({dim, hidden}) * 0.02).requires_grad_(true);
  auto b2 = torch::zeros({dim}).requires_grad_(true);
  auto mlp = [=](const torch::Tensor& x) {
    return nmsparse::FusedMlpApplies(x, w1, b1, w2, b2)
               ? nmsparse::FusedMlp(x, w1, b1, w2, b2)
               : torch::linear(nmsparse::Gelu(torch::linear(x, w1, b1)), w2, b2);
  };
  Report(name, mlp, torch::randn({batch, tokens, dim}), rounds);
}

// The attention's softmax alone, forward + backward, over `heads` [tokens, tokens] score blocks one after
// another as the fused attention runs them: each path (SoftmaxRowsInPlaceOn) side by side.
void SoftmaxCase(const char* name, int64_t heads, int64_t tokens, int rounds) {
  const int64_t block = tokens * tokens;
  const torch::Tensor scores = torch::randn({heads, block}) * 3;
  const torch::Tensor upstream = torch::randn({heads, block});
  torch::Tensor p = scores.clone(), g = upstream.clone();
  std::vector<std::function<void()>> variants;
  for (KernelIsa isa : Paths()) {
    variants.push_back([=]() mutable {
      p.copy_(scores);
      g.copy_(upstream);
      for (int64_t h = 0; h < heads; ++h) {
        float* ph = p.data_ptr<float>() + h * block;
        nmsparse::SoftmaxRowsInPlaceOn(isa, ph, tokens, tokens);
        nmsparse::SoftmaxBackwardRowsInPlaceOn(isa, ph, g.data_ptr<float>() + h * block, tokens, tokens,
                                               0.25f);
      }
    });
  }
  PrintLine(name, nmsparse::bench::InterleavedMedianMs(variants, rounds), false);
}

// The Mlp's fc2 bias loops alone on a [rows, cols] block: the bias added to every row, then the column sums
// (its gradient), 20 times per call (one call is a few microseconds).
void BiasCase(const char* name, int64_t rows, int64_t cols, int rounds) {
  torch::Tensor y = torch::randn({rows, cols}), bias = torch::randn({cols}), sums = torch::zeros({cols});
  std::vector<std::function<void()>> variants;
  for (KernelIsa isa : Paths()) {
    variants.push_back([=]() mutable {
      for (int i = 0; i < 20; ++i) {
        nmsparse::AddBiasRowsOn(isa, y.data_ptr<float>(), bias.data_ptr<float>(), rows, cols);
        nmsparse::AddColumnSumsOn(isa, y.data_ptr<float>(), sums.data_ptr<float>(), rows, cols);
      }
    });
  }
  PrintLine(name, nmsparse::bench::InterleavedMedianMs(variants, rounds), false);
}

}  // namespace

int main(int argc, char** argv) {
  // As nmtrain (worker/trainer/main.cc): activation buffers stay in glibc's heap instead of being mapped and
  // unmapped at every call, whose page faults would otherwise fall on whichever variant allocates first.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  torch::set_num_threads(argc > 2 ? std::atoi(argv[2]) : 1);
  torch::manual_seed(0);
  std::printf("forward + backward, median of %d interleaved rounds, %d thread(s); CPU kernels up to %s\n",
              rounds, torch::get_num_threads(), nmsparse::KernelIsaName(nmsparse::CpuKernelIsa()));
  std::printf("load average at start: %s\n", nmsparse::bench::LoadAverage().c_str());
  AttentionCase("attention, micro ViT [128, 50, 3x4x16]", 128, 50, 4, 16, rounds);
  AttentionCase("attention, ViT-S/16 [16, 197, 3x6x64]", 16, 197, 6, 64, rounds);
  MlpCase("mlp (fc1, gelu, fc2), micro ViT [128, 50, 64]", 128, 50, 64, 256, rounds);
  MlpCase("mlp (fc1, gelu, fc2), ViT-S/16 [16, 197, 384]", 16, 197, 384, 1536, rounds);
  Report("gelu, micro ViT mlp [128, 50, 256]", nmsparse::Gelu, torch::randn({128, 50, 256}), rounds);
  Report("gelu, ViT-S/16 mlp [16, 197, 1536]", nmsparse::Gelu, torch::randn({16, 197, 1536}), rounds);
  BiasCase("fc2 bias + its gradient x20, micro ViT [6400, 64]", 6400, 64, rounds);
  BiasCase("fc2 bias + its gradient x20, ViT-S/16 [1024, 384]", 1024, 384, rounds);
  SoftmaxCase("softmax rows, micro ViT 512 x [50, 50]", 512, 50, rounds);
  SoftmaxCase("softmax rows, [65, 65] x 256", 256, 65, rounds);
  SoftmaxCase("softmax rows, ViT-S/16 96 x [197, 197]", 96, 197, rounds);
  std::printf("load average at end: %s\n", nmsparse::bench::LoadAverage().c_str());
}
