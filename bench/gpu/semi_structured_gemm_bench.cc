// Per GEMM of issue 17's table: the dense linear (cuBLAS through torch::linear) against the 2:4
// semi-structured linear (cuSPARSELt, plans made once), forward and forward + backward, bf16, on one GPU.
// Prints per shape, for the bare GEMM (cuBLAS mm against compress + cuSPARSELt matmul, its output written
// column-major, "gemm_col", or row-major and transposed back with a copy, "gemm_row": the choice
// NMSPARSE_CUSPARSELT_OUTPUT makes, docs/accelerated-2-4.md) and the whole layer call with its mask and
// bias ("fwd", "fwd+bwd"): GPU time per call (CUDA events around ITERS calls:
// "kernel"), wall time per call with the host waiting for the GPU ("wall"), host time per call (enqueueing
// only: what the trainer's thread spends), and the speedups. Build with the CMake CUDA build (docs/gpu.md);
// run on a GPU node:
//   build/cuda/semi_structured_gemm_bench [--iters 50] [--transposable] [--activation]
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/semi_structured/cusparselt_plan.h"
#include "worker/sparsity/semi_structured/semi_structured_linear.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {
namespace {

struct Shape {
  const char* name;
  int64_t m, k, n;
};

const Shape kShapes[] = {{"ViT-B/16 fc1 b64", 12608, 768, 3072},   {"ViT-B/16 fc1 b256", 50432, 768, 3072},
                         {"ViT-B/16 fc2 b256", 50432, 3072, 768},  {"ViT-L/16 fc1 b128", 25216, 1024, 4096},
                         {"ViT-L/16 fc1 b256", 50432, 1024, 4096}, {"ViT-L/16 fc2 b256", 50432, 4096, 1024},
                         {"ViT-H/14 fc1 b256", 65792, 1280, 5120}, {"16384x8192->8192", 16384, 8192, 8192}};

struct Times {
  double kernel_ms, wall_ms, host_ms;
};

Times Measure(const std::function<void()>& fn, int iters) {
  for (int i = 0; i < 5; ++i) fn();
  torch::cuda::synchronize();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const auto t0 = std::chrono::steady_clock::now();
  cudaEventRecord(start, stream);
  for (int i = 0; i < iters; ++i) fn();
  cudaEventRecord(stop, stream);
  const auto t1 = std::chrono::steady_clock::now();  // Host time to enqueue `iters` calls.
  cudaEventSynchronize(stop);
  const auto t2 = std::chrono::steady_clock::now();
  float kernel = 0;
  cudaEventElapsedTime(&kernel, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  return {kernel / iters, ms(t2 - t0) / iters, ms(t1 - t0) / iters};
}

int Main(int argc, char** argv) {
  int iters = 50;
  SemiStructuredConfig config;
  config.accelerate = Accelerate::kForce;
  SemiStructuredKind kind = SemiStructuredKind::kWeight;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--transposable")) config.mask = SemiStructuredMask::kTransposable;
    if (!std::strcmp(argv[i], "--activation")) kind = SemiStructuredKind::kActivation;
  }
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "no CUDA device visible: run on a GPU node\n");
    return 2;
  }
  const torch::Device device(torch::kCUDA, 0);
  auto backend = MakeSemiStructuredGemm(device, config);
  if (backend.gemm == nullptr) {
    std::fprintf(stderr, "no 2:4 kernels here: %s\n", backend.unavailable.c_str());
    return 2;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("%s, bf16, %s 2:4, %s mask, %d iterations per figure\n", prop.name,
              kind == SemiStructuredKind::kWeight ? "weight" : "activation", ToString(config.mask).c_str(),
              iters);
  std::printf("%-20s %-9s %10s %10s %8s %10s %10s %8s %10s %10s\n", "GEMM", "pass", "dense_kern", "2:4_kern",
              "kern_x", "dense_wall", "2:4_wall", "wall_x", "dense_host", "2:4_host");
  auto rule = std::make_shared<LayerRule>();
  rule->recipe = Recipe::kSrste;
  rule->blocks = {BlockRule{true, {2, 4}}};
  for (const Shape& s : kShapes) {
    torch::manual_seed(0);
    const auto options = torch::TensorOptions().device(device);
    const torch::Tensor x = torch::randn({s.m, s.k}, options.dtype(torch::kBFloat16)).requires_grad_(true);
    const torch::Tensor w = torch::randn({s.n, s.k}, options).requires_grad_(true);
    const torch::Tensor b = torch::zeros({s.n}, options).requires_grad_(true);
    const torch::Tensor g = torch::randn({s.m, s.n}, options.dtype(torch::kBFloat16));
    SemiStructuredLinear linear(kind, config.mask, backend);
    const auto sparse = [&] { return linear.Forward(x, w, rule.get(), b); };
    const auto dense = [&] {  // The masked dense linear, as the engine runs it.
      torch::Tensor in = kind == SemiStructuredKind::kActivation ? x * ActivationTwoFourMask(x) : x;
      return torch::linear(in, ApplyLayerRule(w, rule.get()).to(torch::kBFloat16), b.to(torch::kBFloat16));
    };
    linear.set_preparing(true);  // Plans, the algorithm search (and timing under auto), once, untimed.
    sparse();
    linear.set_preparing(false);
    if (kind == SemiStructuredKind::kWeight) {  // The bare GEMM: cuBLAS against compress + cuSPARSELt matmul.
      torch::NoGradGuard no_grad;
      const torch::Tensor xb = x.detach(), wb = ApplyLayerRule(w.detach(), rule.get()).to(torch::kBFloat16);
      const CusparseLtHandlePtr handle = MakeCusparseLtHandle();
      for (bool column : {true, false}) {
        CusparseLtPlan plan(handle.get(), {s.n, s.m, s.k, torch::kBFloat16, column, false}, device);
        const Times d = Measure([&] { xb.mm(wb.t()); }, iters);
        const Times sp = Measure(
            [&] {
              const torch::Tensor out = plan.Run(wb, xb);
              if (!column) out.t().contiguous();
            },
            iters);
        std::printf("%-20s %-9s %10.3f %10.3f %7.2fx %10.3f %10.3f %7.2fx %10.4f %10.4f  (%s)\n", s.name,
                    column ? "gemm_col" : "gemm_row", d.kernel_ms, sp.kernel_ms, d.kernel_ms / sp.kernel_ms,
                    d.wall_ms, sp.wall_ms, d.wall_ms / sp.wall_ms, d.host_ms, sp.host_ms,
                    plan.Describe().c_str());
      }
    }
    for (bool backward : {false, true}) {
      const auto step = [&](const std::function<torch::Tensor()>& f) {
        return [&, f] {
          torch::Tensor y = f();
          if (backward) y.backward(g);
        };
      };
      torch::AutoGradMode grad_mode(backward);
      const Times d = Measure(step(dense), iters), sp = Measure(step(sparse), iters);
      std::printf("%-20s %-9s %10.3f %10.3f %7.2fx %10.3f %10.3f %7.2fx %10.4f %10.4f\n", s.name,
                  backward ? "fwd+bwd" : "fwd", d.kernel_ms, sp.kernel_ms, d.kernel_ms / sp.kernel_ms,
                  d.wall_ms, sp.wall_ms, d.wall_ms / sp.wall_ms, d.host_ms, sp.host_ms);
    }
    if (!linear.last_path().kernel)
      std::printf("  (2:4 kernel not used: %s)\n", linear.last_path().reason.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) { return nmsparse::Main(argc, argv); }
