// The cuSPARSELt 2:4 linears against the masked dense linear on a GPU, for every GEMM shape of issue 17's
// table (ViT-B/L/H MLP layers at training batch sizes): forward and both gradients within bf16 rounding.
// Skips, saying why, where no CUDA device with compute capability >= 8.0 and cuSPARSELt is at hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#ifdef NMSPARSE_WITH_CUSPARSELT
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <cmath>
#include <cstdlib>
#include <memory>
#include <tuple>

#include "worker/sparsity/layer_rule.h"
#include "worker/sparsity/nm_mask.h"
#include "worker/sparsity/semi_structured/cusparselt_plan.h"
#include "worker/sparsity/semi_structured/semi_structured_linear.h"
#include "worker/sparsity/semi_structured/transposable_mask.h"
#include "worker/sparsity/sparse_functions.h"

namespace nmsparse {
namespace {

struct Shape {
  int64_t m, k, n;
};

// m = batch x tokens; k -> n as in the table.
const Shape kShapes[] = {{12608, 768, 3072},  {50432, 768, 3072},  {50432, 3072, 768},  {25216, 1024, 4096},
                         {50432, 1024, 4096}, {50432, 4096, 1024}, {65792, 1280, 5120}, {16384, 8192, 8192}};

SemiStructuredGemmOrWhy Backend(SemiStructuredMask mask) {
  SemiStructuredConfig config;
  config.accelerate = Accelerate::kForce;  // The kernel at every shape, whatever its speed.
  config.mask = mask;
  return MakeSemiStructuredGemm(torch::Device(torch::kCUDA, 0), config);
}

#define SKIP_WITHOUT_KERNELS()                                                              \
  do {                                                                                      \
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";             \
    const auto backend = Backend(SemiStructuredMask::kExact);                               \
    if (backend.gemm == nullptr) GTEST_SKIP() << "no 2:4 kernels: " << backend.unavailable; \
  } while (0)

// One bf16 rounding of each result (2^-8 relative) on either side, relative to the result's largest value;
// the fp32 accumulation order differs between cuSPARSELt and cuBLAS by far less (k * 2^-24).
void ExpectBf16Close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  const double scale = want.abs().max().item<double>();
  const double err = (got.to(torch::kFloat32) - want.to(torch::kFloat32)).abs().max().item<double>();
  EXPECT_LE(err, 2 * std::ldexp(1.0, -8) * scale) << what << " (max |want| " << scale << ")";
}

// The engine's 2:4 mask along rows, computed in fp32 on the tensor's device.
[[maybe_unused]] torch::Tensor NMMaskOnDevice(const torch::Tensor& w) {
  return SelectTopNWithTensorOps(w.to(torch::kFloat32).contiguous(), 2, 4, 0.f).to(w.scalar_type());
}

struct Result {
  torch::Tensor y, dx, dw, db;
};

// Set-up as SemiStructuredLayers::Prepare does it: one forward pass at the shape, in preparing mode.
void Prepare(SemiStructuredLinear& linear, const torch::Tensor& x, const torch::Tensor& w,
             const torch::Tensor& b, const LayerRule& rule) {
  torch::NoGradGuard no_grad;
  PrepareTransposableMask(x.device());
  linear.set_preparing(true);
  linear.Forward(x, w, &rule, b);
  linear.set_preparing(false);
}

// y = layer(x) in bf16 with the fp32 weight and bias, loss sum(y * g).
template <typename Forward>
Result RunLinear(Forward forward, const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0,
                 const torch::Tensor& g) {
  torch::Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  torch::Tensor b = b0.clone().requires_grad_(true);
  torch::Tensor y = forward(x, w, b);
  y.backward(g);
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

void CompareWithMaskedDense(const Shape& s, SemiStructuredKind kind, SemiStructuredMask mask) {
  torch::manual_seed(s.m + s.k + s.n);
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor x = torch::randn({s.m, s.k}, cuda.dtype(torch::kBFloat16));
  const torch::Tensor w = torch::randn({s.n, s.k}, cuda) / std::sqrt(static_cast<double>(s.k));
  const torch::Tensor b = torch::randn({s.n}, cuda) * 0.1;
  const torch::Tensor g = torch::randn({s.m, s.n}, cuda.dtype(torch::kBFloat16));
  auto rule = std::make_shared<LayerRule>();
  rule->recipe = Recipe::kSrste;
  rule->blocks = {BlockRule{true, {2, 4}}};

  SemiStructuredLinear linear(kind, mask, Backend(mask));
  Prepare(linear, x, w, b, *rule);
  const Result got =
      RunLinear([&](const torch::Tensor& xi, const torch::Tensor& wi,
                    const torch::Tensor& bi) { return linear.Forward(xi, wi, rule.get(), bi); },
                x, w, b, g);
  ASSERT_TRUE(linear.last_path().kernel) << linear.last_path().reason;

  // The masked dense linear on the same masked operands, in bf16 as autocast runs it.
  const Result want = RunLinear(
      [&](const torch::Tensor& xi, const torch::Tensor& wi, const torch::Tensor& bi) {
        torch::Tensor w_tilde;
        torch::Tensor input = xi;
        if (kind == SemiStructuredKind::kActivation) {
          input = xi * ActivationTwoFourMask(xi);
          w_tilde = ApplyLayerRule(wi, rule.get());
        } else {
          w_tilde = mask == SemiStructuredMask::kTransposable ? TransposableEffectiveWeight(wi, *rule)
                                                              : ApplyLayerRule(wi, rule.get());
        }
        return torch::linear(input, w_tilde.to(torch::kBFloat16), bi.to(torch::kBFloat16));
      },
      x, w, b, g);
  const std::string where = std::to_string(s.m) + "x" + std::to_string(s.k) + "->" + std::to_string(s.n);
  ExpectBf16Close(got.y, want.y, "y " + where);
  ExpectBf16Close(got.dx, want.dx, "dx " + where);
  ExpectBf16Close(got.dw, want.dw, "dw " + where);
  ExpectBf16Close(got.db, want.db, "db " + where);
}

// ViT-B/16's and ViT-L/16's MLP layers at batch 8 (197 tokens each), every variant: quick enough to run under
// compute-sanitizer's memcheck (bench/gpu/node_check.sh), which sees a matmul writing past the workspace the
// chosen algorithm needs, or past any buffer of a plan.
TEST(CusparseLtGpuTest, VitLayerShapesAtBatch8) {
  SKIP_WITHOUT_KERNELS();
  for (const Shape& s :
       {Shape{1576, 768, 3072}, Shape{1576, 3072, 768}, Shape{1576, 1024, 4096}, Shape{1576, 4096, 1024}}) {
    CompareWithMaskedDense(s, SemiStructuredKind::kWeight, SemiStructuredMask::kExact);
    CompareWithMaskedDense(s, SemiStructuredKind::kWeight, SemiStructuredMask::kTransposable);
    CompareWithMaskedDense(s, SemiStructuredKind::kActivation, SemiStructuredMask::kExact);
  }
}

TEST(CusparseLtGpuTest, ExactMaskEveryTableShape) {
  SKIP_WITHOUT_KERNELS();
  for (const Shape& s : kShapes)
    CompareWithMaskedDense(s, SemiStructuredKind::kWeight, SemiStructuredMask::kExact);
}

// The row-major output and its transpose copy (NMSPARSE_CUSPARSELT_OUTPUT=row) compute the same.
TEST(CusparseLtGpuTest, RowMajorOutputOrder) {
  SKIP_WITHOUT_KERNELS();
  setenv("NMSPARSE_CUSPARSELT_OUTPUT", "row", 1);
  CompareWithMaskedDense(kShapes[0], SemiStructuredKind::kWeight, SemiStructuredMask::kExact);
  CompareWithMaskedDense(kShapes[5], SemiStructuredKind::kWeight, SemiStructuredMask::kTransposable);
  unsetenv("NMSPARSE_CUSPARSELT_OUTPUT");
}

// A shape not seen at set-up runs masked dense, saying so: no plan is made inside a step.
TEST(CusparseLtGpuTest, UnpreparedShapeRunsMaskedDense) {
  SKIP_WITHOUT_KERNELS();
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const torch::Tensor w = torch::randn({256, 128}, cuda), b = torch::zeros({256}, cuda);
  auto rule = std::make_shared<LayerRule>();
  rule->recipe = Recipe::kSrste;
  rule->blocks = {BlockRule{true, {2, 4}}};
  SemiStructuredLinear linear(SemiStructuredKind::kWeight, SemiStructuredMask::kExact,
                              Backend(SemiStructuredMask::kExact));
  Prepare(linear, torch::randn({64, 128}, cuda.dtype(torch::kBFloat16)), w, b, *rule);
  linear.Forward(torch::randn({64, 128}, cuda.dtype(torch::kBFloat16)), w, rule.get(), b);
  EXPECT_TRUE(linear.last_path().kernel) << linear.last_path().reason;
  linear.Forward(torch::randn({32, 128}, cuda.dtype(torch::kBFloat16)), w, rule.get(), b);
  EXPECT_FALSE(linear.last_path().kernel);
  EXPECT_NE(linear.last_path().reason.find("not prepared before step 1"), std::string::npos)
      << linear.last_path().reason;
}

#ifdef NMSPARSE_WITH_CUSPARSELT
// LibTorch's sync debug mode errors on any synchronising CUDA call: a prepared 2:4 layer's forward and
// backward (its mask, compression, matmuls, transposes and bias) make none.
TEST(CusparseLtGpuTest, PreparedLayerStepNeverSynchronises) {
  SKIP_WITHOUT_KERNELS();
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const SemiStructuredMask mask : {SemiStructuredMask::kExact, SemiStructuredMask::kTransposable}) {
    const torch::Tensor x = torch::randn({512, 256}, cuda.dtype(torch::kBFloat16)).requires_grad_(true);
    const torch::Tensor w = torch::randn({384, 256}, cuda).requires_grad_(true);
    const torch::Tensor b = torch::zeros({384}, cuda).requires_grad_(true);
    auto rule = std::make_shared<LayerRule>();
    rule->recipe = Recipe::kSrste;
    rule->blocks = {BlockRule{true, {2, 4}}};
    SemiStructuredLinear linear(SemiStructuredKind::kWeight, mask, Backend(mask));
    Prepare(linear, x, w, b, *rule);
    torch::cuda::synchronize();
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
    EXPECT_NO_THROW({
      torch::Tensor y = linear.Forward(x, w, rule.get(), b);
      y.sum().backward();
    });
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
    EXPECT_TRUE(linear.last_path().kernel) << linear.last_path().reason;
  }
}
#endif

TEST(CusparseLtGpuTest, TransposableMaskSparseInputGradient) {
  SKIP_WITHOUT_KERNELS();
  for (const Shape& s : {kShapes[0], kShapes[5]}) {
    CompareWithMaskedDense(s, SemiStructuredKind::kWeight, SemiStructuredMask::kTransposable);
  }
}

TEST(CusparseLtGpuTest, ActivationTwoFour) {
  SKIP_WITHOUT_KERNELS();
  for (const Shape& s : {kShapes[0], kShapes[2]}) {
    CompareWithMaskedDense(s, SemiStructuredKind::kActivation, SemiStructuredMask::kExact);
  }
}

#ifdef NMSPARSE_WITH_CUSPARSELT
// A step's compress + matmul captures into a CUDA graph, which fails on a host synchronisation or a
// cudaMalloc during capture: the step does neither. Its replay computes the dense product.
TEST(CusparseLtGpuTest, StepNeedsNoHostSyncOrAllocation) {
  SKIP_WITHOUT_KERNELS();
  const torch::Device device(torch::kCUDA, 0);
  const Shape s = kShapes[0];
  const auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(device);
  const torch::Tensor x = torch::randn({s.m, s.k}, bf16);
  const torch::Tensor w_dense = torch::randn({s.n, s.k}, bf16);
  const torch::Tensor w = w_dense * NMMaskOnDevice(w_dense);
  const CusparseLtHandlePtr handle = MakeCusparseLtHandle();
  CusparseLtPlan plan(handle.get(), {s.n, s.m, s.k, torch::kBFloat16, true, false}, device);
  const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool(false, device.index());
  torch::Tensor y;
  at::cuda::CUDAGraph graph;
  {
    const c10::cuda::CUDAStreamGuard guard(stream);
    plan.Run(w, x);  // Warm-up outside the capture.
    stream.synchronize();
    graph.capture_begin();
    y = plan.Run(w, x);
    graph.capture_end();
    graph.replay();
    stream.synchronize();
  }
  ExpectBf16Close(y, x.mm(w.t()), "graph replay");
}
#endif

}  // namespace
}  // namespace nmsparse
