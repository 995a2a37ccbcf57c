// SemiStructuredGemm on cuSPARSELt (CUDA builds with NMSPARSE_WITH_CUSPARSELT); elsewhere
// MakeSemiStructuredGemm only says why there are no 2:4 kernels.
#include "worker/sparsity/semi_structured/semi_structured_gemm.h"

#ifdef NMSPARSE_WITH_CUSPARSELT
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/torch.h>

#include <functional>
#include <iostream>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "worker/compat/torch_compat.h"
#include "worker/sparsity/semi_structured/cusparselt_plan.h"
#endif

namespace nmsparse {

#ifdef NMSPARSE_WITH_CUSPARSELT
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

CusparseLtPlan* PlanOf(const torch::IValue& v) { return reinterpret_cast<CusparseLtPlan*>(v.toInt()); }

// Y = X @ W~^T on the 2:4 kernel (W~ 2:4 along k); dX on the kernel too when a transposed plan is given.
class WeightSparseFunction : public torch::autograd::Function<WeightSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& bias, int64_t forward_plan, int64_t input_grad_plan) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["input_grad_plan"] = input_grad_plan;
    ctx->saved_data["has_bias"] = bias.defined();
    torch::Tensor y = reinterpret_cast<CusparseLtPlan*>(forward_plan)->Run(w, x);  // [m, n].
    if (bias.defined()) y.add_(bias);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &w = saved[1];
    const torch::Tensor dy = grads[0].contiguous();
    CusparseLtPlan* transposed = PlanOf(ctx->saved_data["input_grad_plan"]);
    const torch::Tensor dx = transposed != nullptr ? transposed->Run(w.t().contiguous(), dy) : dy.mm(w);
    const torch::Tensor db = ctx->saved_data["has_bias"].toBool() ? dy.sum(0) : torch::Tensor();
    return {dx, dy.t().mm(x), db, torch::Tensor(), torch::Tensor()};
  }
};

// Y = X24 @ W^T on the 2:4 kernel (X24 2:4 along k); gradients as dense GEMMs.
class ActivationSparseFunction : public torch::autograd::Function<ActivationSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x24, const torch::Tensor& w,
                               const torch::Tensor& bias, int64_t plan) {
    ctx->save_for_backward({x24, w});
    ctx->saved_data["has_bias"] = bias.defined();
    torch::Tensor y = reinterpret_cast<CusparseLtPlan*>(plan)->Run(x24, w);  // [m, n].
    if (bias.defined()) y.add_(bias);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor dy = grads[0].contiguous();
    const torch::Tensor db = ctx->saved_data["has_bias"].toBool() ? dy.sum(0) : torch::Tensor();
    return {dy.mm(saved[1]), dy.t().mm(saved[0]), db, torch::Tensor()};
  }
};

// The dtype the GEMM runs in: autocast's on CUDA when enabled, else the input's.
torch::ScalarType ComputeDtype(torch::ScalarType input) {
  return compat::IsAutocastEnabled(c10::DeviceType::CUDA) ? compat::AutocastDtype(c10::DeviceType::CUDA)
                                                          : input;
}

std::string DtypeName(torch::ScalarType dtype) {
  return dtype == torch::kBFloat16 ? "bf16"
         : dtype == torch::kHalf   ? "fp16"
                                   : std::string(c10::toString(dtype));
}

// GPU milliseconds per call of `fn` (CUDA events around `iterations` calls after a warm-up). Set-up only.
double GpuMilliseconds(const std::function<void()>& fn, int iterations = 20) {
  for (int i = 0; i < 3; ++i) fn();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  for (int i = 0; i < iterations; ++i) fn();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iterations;
}

class CusparseLtGemm : public SemiStructuredGemm {
 public:
  CusparseLtGemm(const torch::Device& device, std::string gpu, const SemiStructuredConfig& config)
      : device_(device),
        gpu_(std::move(gpu)),
        accelerate_(config.accelerate),
        transposable_(config.mask == SemiStructuredMask::kTransposable),
        margin_(config.margin),
        cache_path_(GemmDecisionCache::DefaultPath(config.decision_cache)) {}

  torch::Tensor WeightSparseLinear(const torch::Tensor& input, const torch::Tensor& w_tilde,
                                   const torch::Tensor& bias, bool transposable) override {
    const torch::ScalarType dtype = ComputeDtype(input.scalar_type());
    const int64_t n = w_tilde.size(0), k = w_tilde.size(1), m = input.numel() / k;
    CusparseLtPlan* forward = Plan({n, m, k, dtype, true});
    CusparseLtPlan* input_grad = transposable ? Plan({k, m, n, dtype, true}) : nullptr;
    const torch::Tensor y = WeightSparseFunction::apply(
        input.reshape({m, k}).to(dtype).contiguous(), w_tilde.to(dtype).contiguous(),
        bias.defined() ? bias.to(dtype) : bias, reinterpret_cast<int64_t>(forward),
        reinterpret_cast<int64_t>(input_grad));
    return y.view(OutSizes(input, n));
  }

  torch::Tensor ActivationSparseLinear(const torch::Tensor& input_24, const torch::Tensor& weight,
                                       const torch::Tensor& bias) override {
    const torch::ScalarType dtype = ComputeDtype(input_24.scalar_type());
    const int64_t n = weight.size(0), k = weight.size(1), m = input_24.numel() / k;
    const torch::Tensor y = ActivationSparseFunction::apply(
        input_24.reshape({m, k}).to(dtype).contiguous(), weight.to(dtype).contiguous(),
        bias.defined() ? bias.to(dtype) : bias, reinterpret_cast<int64_t>(Plan({m, n, k, dtype, false})));
    return y.view(OutSizes(input_24, n));
  }

  GemmDecision Decide(SemiStructuredKind kind, int64_t m, int64_t k, int64_t n,
                      torch::ScalarType input_dtype) override {
    const torch::ScalarType dtype = ComputeDtype(input_dtype);
    const auto key = std::make_tuple(kind, m, k, n, dtype);
    auto it = decisions_.find(key);
    if (it == decisions_.end()) it = decisions_.emplace(key, DecideOnce(kind, m, k, n, dtype)).first;
    return it->second;
  }

 private:
  using PlanKey = std::tuple<int64_t, int64_t, int64_t, torch::ScalarType, bool>;

  static std::vector<int64_t> OutSizes(const torch::Tensor& input, int64_t n) {
    std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
    sizes.back() = n;
    return sizes;
  }

  CusparseLtPlan* Plan(const CusparseLtShape& s) {
    const PlanKey key{s.r, s.c, s.k, s.dtype, s.out_transposed};
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      it = plans_.emplace(key, std::make_unique<CusparseLtPlan>(CusparseLtHandle(), s, device_)).first;
    }
    return it->second.get();
  }

  // Makes the plans (so that no step sets one up) and, under auto, times dense against 2:4.
  GemmDecision DecideOnce(SemiStructuredKind kind, int64_t m, int64_t k, int64_t n, torch::ScalarType dtype) {
    if (dtype != torch::kBFloat16 && dtype != torch::kHalf) {
      return {false, 0, absl::StrCat("dtype ", DtypeName(dtype), ": the 2:4 kernels run bf16 or fp16")};
    }
    const c10::cuda::CUDAGuard guard(device_);
    std::function<void()> dense, sparse;
    try {
      MakeTimedCalls(kind, m, k, n, dtype, &dense, &sparse);
    } catch (const c10::Error& e) {
      return {false, 0,
              absl::StrCat("cuSPARSELt refused ", m, "x", k, "->", n, ": ", e.what_without_backtrace())};
    }
    if (accelerate_ != Accelerate::kAuto) return DecideGemm(accelerate_, std::nullopt, margin_);
    const GemmKey cache_key{gpu_, DtypeName(dtype), OpName(kind), m, k, n};
    std::optional<GemmTiming> timing = Cache().Find(cache_key);
    if (!timing) {
      timing = GemmTiming{GpuMilliseconds(dense), GpuMilliseconds(sparse)};
      Cache().Put(cache_key, *timing);
      if (auto st = Cache().Save(); !st.ok()) std::cerr << "nmtrain: warning: " << st.message() << "\n";
    }
    return DecideGemm(accelerate_, timing, margin_);
  }

  std::string OpName(SemiStructuredKind kind) const {
    if (kind == SemiStructuredKind::kActivation) return "activation";
    return transposable_ ? "weight_transposable" : "weight";
  }

  // The GEMMs that differ between the dense and the 2:4 linear, on operands of the layer's shape: the
  // forward (with the per-step compression), and the input gradient under a transposable mask.
  void MakeTimedCalls(SemiStructuredKind kind, int64_t m, int64_t k, int64_t n, torch::ScalarType dtype,
                      std::function<void()>* dense, std::function<void()>* sparse) {
    const auto options = torch::TensorOptions().dtype(dtype).device(device_);
    const torch::Tensor x = torch::randn({m, k}, options), w = torch::randn({n, k}, options);
    const torch::Tensor dy = torch::randn({m, n}, options);
    if (kind == SemiStructuredKind::kActivation) {
      CusparseLtPlan* plan = Plan({m, n, k, dtype, false});
      *dense = [x, w] { x.mm(w.t()); };
      *sparse = [plan, x, w] { plan->Run(x, w); };
      return;
    }
    CusparseLtPlan* forward = Plan({n, m, k, dtype, true});
    CusparseLtPlan* input_grad = transposable_ ? Plan({k, m, n, dtype, true}) : nullptr;
    *dense = [x, w, dy, input_grad] {
      x.mm(w.t());
      if (input_grad != nullptr) dy.mm(w);
    };
    const torch::Tensor wt = w.t().contiguous();
    *sparse = [forward, input_grad, x, w, wt, dy] {
      forward->Run(w, x);
      if (input_grad != nullptr) input_grad->Run(wt, dy);
    };
  }

  GemmDecisionCache& Cache() {
    if (!cache_) {
      auto loaded = GemmDecisionCache::Load(cache_path_);
      if (!loaded.ok()) {
        std::cerr << "nmtrain: warning: " << loaded.status().message() << " (timing anew)\n";
        loaded = GemmDecisionCache::Empty(cache_path_);
      }
      cache_.emplace(std::move(*loaded));
    }
    return *cache_;
  }

  torch::Device device_;
  std::string gpu_;
  Accelerate accelerate_;
  bool transposable_;
  double margin_;
  std::string cache_path_;
  std::optional<GemmDecisionCache> cache_;
  std::map<PlanKey, std::unique_ptr<CusparseLtPlan>> plans_;
  std::map<std::tuple<SemiStructuredKind, int64_t, int64_t, int64_t, torch::ScalarType>, GemmDecision>
      decisions_;
};

}  // namespace

SemiStructuredGemmOrWhy MakeSemiStructuredGemm(const torch::Device& device,
                                               const SemiStructuredConfig& config) {
  if (!device.is_cuda()) return {nullptr, absl::StrCat("device ", device.str())};
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device.has_index() ? device.index() : 0) != cudaSuccess) {
    return {nullptr, absl::StrCat("cannot query ", device.str())};
  }
  if (prop.major < 8) {
    return {nullptr, absl::StrCat("compute capability ", prop.major, ".", prop.minor, " < 8.0")};
  }
  return {std::make_shared<CusparseLtGemm>(device, prop.name, config), ""};
}

#else  // No cuSPARSELt in this build.

SemiStructuredGemmOrWhy MakeSemiStructuredGemm(const torch::Device& device, const SemiStructuredConfig&) {
  if (!device.is_cuda()) return {nullptr, "device " + device.str()};
  return {nullptr, "built without cuSPARSELt"};
}

#endif  // NMSPARSE_WITH_CUSPARSELT

}  // namespace nmsparse
