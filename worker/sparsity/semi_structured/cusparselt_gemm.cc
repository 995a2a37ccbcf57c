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
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "worker/compat/torch_compat.h"
#include "worker/sparsity/semi_structured/cusparselt_plan.h"
#include "worker/sparsity/semi_structured/interleaved_timing.h"
#endif

namespace nmsparse {

#ifdef NMSPARSE_WITH_CUSPARSELT
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

CusparseLtPlan* PlanOf(const torch::IValue& v) { return reinterpret_cast<CusparseLtPlan*>(v.toInt()); }

// A row-major D = A B^T of a weight plan is Y^T: transposed back with a copy (OutputOrder::kRow).
torch::Tensor InRowMajor(const torch::Tensor& d, const CusparseLtPlan& plan) {
  return plan.shape().out_transposed ? d : d.t().contiguous();
}

// Y[m, n] = X[m, k] W~[n, k]^T (+ bias, fused) on the kernel: D = W~ X^T.
torch::Tensor SparseForward(CusparseLtPlan& plan, const torch::Tensor& x, const torch::Tensor& w,
                            const torch::Tensor& bias) {
  return InRowMajor(plan.Run(w, x, bias), plan);
}

// dX[m, k] = dY[m, n] W~[n, k] on the kernel (W~ transposable 2:4): D = W~^T dY^T.
torch::Tensor SparseInputGrad(CusparseLtPlan& plan, const torch::Tensor& w, const torch::Tensor& dy) {
  return InRowMajor(plan.Run(w.t().contiguous(), dy), plan);
}

// Y = X @ W~^T on the 2:4 kernel (W~ 2:4 along k); dX on the kernel too when a transposed plan is given.
class WeightSparseFunction : public torch::autograd::Function<WeightSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& bias, int64_t forward_plan, int64_t input_grad_plan) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["input_grad_plan"] = input_grad_plan;
    ctx->saved_data["has_bias"] = bias.defined();
    return SparseForward(*reinterpret_cast<CusparseLtPlan*>(forward_plan), x, w, bias);  // [m, n].
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &w = saved[1];
    const torch::Tensor dy = grads[0].contiguous();
    CusparseLtPlan* transposed = PlanOf(ctx->saved_data["input_grad_plan"]);
    const torch::Tensor dx = transposed != nullptr ? SparseInputGrad(*transposed, w, dy) : dy.mm(w);
    const torch::Tensor db = ctx->saved_data["has_bias"].toBool() ? dy.sum(0) : torch::Tensor();
    return {dx, dy.t().mm(x), db, torch::Tensor(), torch::Tensor()};
  }
};

// Y = X24 W^T on the 2:4 kernel (X24 2:4 along k), the bias added after (one per column of Y, which
// cuSPARSELt's per-row bias cannot be).
torch::Tensor SparseActivationForward(CusparseLtPlan& plan, const torch::Tensor& x24, const torch::Tensor& w,
                                      const torch::Tensor& bias) {
  torch::Tensor y = plan.Run(x24, w);  // [m, n].
  if (bias.defined()) y.add_(bias);
  return y;
}

// Y = X24 @ W^T on the 2:4 kernel (X24 2:4 along k); gradients as dense GEMMs.
class ActivationSparseFunction : public torch::autograd::Function<ActivationSparseFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x24, const torch::Tensor& w,
                               const torch::Tensor& bias, int64_t plan) {
    ctx->save_for_backward({x24, w});
    ctx->saved_data["has_bias"] = bias.defined();
    return SparseActivationForward(*reinterpret_cast<CusparseLtPlan*>(plan), x24, w, bias);
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

LinearGemm InComputeDtype(LinearGemm gemm) {
  gemm.dtype = ComputeDtype(gemm.dtype);
  return gemm;
}

std::string DtypeName(torch::ScalarType dtype) {
  return dtype == torch::kBFloat16 ? "bf16"
         : dtype == torch::kHalf   ? "fp16"
                                   : std::string(c10::toString(dtype));
}

std::string GemmName(const LinearGemm& g) {
  return absl::StrCat(g.m, "x", g.k, "->", g.n, g.bias ? "+bias " : " ", DtypeName(g.dtype));
}

// GPU milliseconds per call of `fn` over one block of `iterations` calls (CUDA events). Set-up only.
double GpuBlockMilliseconds(const std::function<void()>& fn, int iterations = 10) {
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
        order_(OutputOrderFromEnv()),
        cache_path_(GemmDecisionCache::DefaultPath(config.decision_cache)) {}

  torch::Tensor WeightSparseLinear(const torch::Tensor& input, const torch::Tensor& w_tilde,
                                   const torch::Tensor& bias, bool transposable) override {
    const torch::ScalarType dtype = ComputeDtype(input.scalar_type());
    const int64_t n = w_tilde.size(0), k = w_tilde.size(1), m = input.numel() / k;
    const LinearPlans shapes =
        PlansFor({SemiStructuredKind::kWeight, m, k, n, bias.defined(), dtype}, transposable, order_);
    CusparseLtPlan* forward = PlanOrThrow(shapes.forward);
    CusparseLtPlan* input_grad = shapes.input_grad ? PlanOrThrow(*shapes.input_grad) : nullptr;
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
    const LinearPlans shapes =
        PlansFor({SemiStructuredKind::kActivation, m, k, n, bias.defined(), dtype}, false, order_);
    const torch::Tensor y = ActivationSparseFunction::apply(
        input_24.reshape({m, k}).to(dtype).contiguous(), weight.to(dtype).contiguous(),
        bias.defined() ? bias.to(dtype) : bias, reinterpret_cast<int64_t>(PlanOrThrow(shapes.forward)));
    return y.view(OutSizes(input_24, n));
  }

  GemmDecision Prepare(const LinearGemm& gemm) override {
    const LinearGemm g = InComputeDtype(gemm);
    if (!decisions_.count(g)) {
      decisions_[g] = PrepareOnce(g);
      DropUnusedPlans();
    }
    return decisions_.at(g);
  }

  GemmDecision Decide(const LinearGemm& gemm) const override {
    const LinearGemm g = InComputeDtype(gemm);
    auto it = decisions_.find(g);
    if (it != decisions_.end()) return it->second;
    return {false, 0, absl::StrCat("GEMM ", GemmName(g), " not prepared before step 1")};
  }

 private:
  static std::vector<int64_t> OutSizes(const torch::Tensor& input, int64_t n) {
    std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
    sizes.back() = n;
    return sizes;
  }

  CusparseLtPlan* PlanOrThrow(const CusparseLtShape& s) const {
    auto it = plans_.find(s);
    TORCH_CHECK(it != plans_.end(), "cuSPARSELt plan ", s.r, "x", s.c, "x", s.k, " was not made at set-up");
    return it->second.get();
  }

  CusparseLtPlan* MakePlan(const CusparseLtShape& s) {
    auto it = plans_.find(s);
    if (it == plans_.end()) {
      if (!handle_) handle_ = MakeCusparseLtHandle();
      it = plans_.emplace(s, std::make_unique<CusparseLtPlan>(handle_.get(), s, device_)).first;
    }
    return it->second.get();
  }

  // Frees the plans no prepared GEMM runs on (those that lost to dense under auto, or a half-made pair).
  void DropUnusedPlans() {
    std::set<CusparseLtShape> used;
    for (const auto& [g, d] : decisions_) {
      if (!d.sparse) continue;
      const LinearPlans p = PlansFor(g, transposable_, order_);
      used.insert(p.forward);
      if (p.input_grad) used.insert(*p.input_grad);
    }
    for (auto it = plans_.begin(); it != plans_.end();) {
      it = used.count(it->first) ? std::next(it) : plans_.erase(it);
    }
  }

  // Makes the plans and, under auto, times dense against 2:4 as a step runs them.
  GemmDecision PrepareOnce(const LinearGemm& g) {
    if (g.dtype != torch::kBFloat16 && g.dtype != torch::kHalf) {
      return {false, 0, absl::StrCat("dtype ", DtypeName(g.dtype), ": the 2:4 kernels run bf16 or fp16")};
    }
    const c10::cuda::CUDAGuard guard(device_);
    const bool transposable = g.kind == SemiStructuredKind::kWeight && transposable_;
    const LinearPlans shapes = PlansFor(g, transposable, order_);
    try {
      MakePlan(shapes.forward);
      if (shapes.input_grad) MakePlan(*shapes.input_grad);
    } catch (const c10::Error& e) {
      return {false, 0, absl::StrCat("cuSPARSELt refused ", GemmName(g), ": ", e.what_without_backtrace())};
    }
    if (accelerate_ != Accelerate::kAuto) return DecideGemm(accelerate_, std::nullopt, margin_);
    const GemmKey key{gpu_, DtypeName(g.dtype), OpName(g, transposable), g.m, g.k, g.n};
    std::optional<GemmTiming> timing = Cache().Find(key);
    if (!timing) {
      timing = TimeStep(g, shapes);
      Cache().Put(key, *timing);
      if (auto st = Cache().Save(); !st.ok()) std::cerr << "nmtrain: warning: " << st.message() << "\n";
    }
    return DecideGemm(accelerate_, timing, margin_);
  }

  // The timing cache's name of what was timed: a new name whenever what is timed changes, so that older
  // timings (of the bare GEMM, without the bias or the transpose) are not reused.
  std::string OpName(const LinearGemm& g, bool transposable) const {
    const std::string base = g.kind == SemiStructuredKind::kActivation ? "activation"
                             : transposable                            ? "weight_transposable"
                                                                       : "weight";
    return absl::StrCat(base, g.bias ? "+bias" : "", "/", ToString(order_), "/step");
  }

  // What a step does differently on the two paths, on operands of the layer's shape, timed interleaved
  // (interleaved_timing.h). Dense: the linear with its fused bias, and under a transposable mask the input
  // gradient dY W~. 2:4: the compression and the matmul with the bias fused (activation: added after), the
  // transpose copy of a row-major output, and under a transposable mask W~^T's copy, compression and matmul.
  // The rest of the step (weight and bias gradients; the input gradient of the exact mask) is the same dense
  // work on both paths.
  GemmTiming TimeStep(const LinearGemm& g, const LinearPlans& shapes) {
    const auto options = torch::TensorOptions().dtype(g.dtype).device(device_);
    const torch::Tensor x = torch::randn({g.m, g.k}, options), w = torch::randn({g.n, g.k}, options);
    const torch::Tensor dy = torch::randn({g.m, g.n}, options);
    const torch::Tensor bias = g.bias ? torch::randn({g.n}, options) : torch::Tensor();
    CusparseLtPlan* forward = plans_.at(shapes.forward).get();
    CusparseLtPlan* input_grad = shapes.input_grad ? plans_.at(*shapes.input_grad).get() : nullptr;
    std::function<void()> dense, sparse;
    if (g.kind == SemiStructuredKind::kActivation) {
      dense = [&] { torch::linear(x, w, bias); };
      sparse = [&] { SparseActivationForward(*forward, x, w, bias); };
    } else {
      dense = [&] {
        torch::linear(x, w, bias);
        if (input_grad != nullptr) dy.mm(w);
      };
      sparse = [&] {
        SparseForward(*forward, x, w, bias);
        if (input_grad != nullptr) SparseInputGrad(*input_grad, w, dy);
      };
    }
    return TimeInterleaved(
        [&](TimedSide side) { return GpuBlockMilliseconds(side == TimedSide::kDense ? dense : sparse); });
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
  OutputOrder order_;
  std::string cache_path_;
  std::optional<GemmDecisionCache> cache_;
  // Declared before the plans, so destroyed after them: everything is freed with this object (at exit).
  CusparseLtHandlePtr handle_;
  std::map<CusparseLtShape, std::unique_ptr<CusparseLtPlan>> plans_;
  std::map<LinearGemm, GemmDecision> decisions_;  // Keyed in the compute dtype.
};

}  // namespace

SemiStructuredGemmOrWhy MakeSemiStructuredGemm(const torch::Device& device,
                                               const SemiStructuredConfig& config) {
  if (!device.is_cuda()) return {nullptr, absl::StrCat("device ", device.str())};
  if (config.accelerate == Accelerate::kOff) return {nullptr, "accelerate: off"};
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
