// The one place where nmsparse's LibTorch code differs between the versions it builds against: Debian's
// LibTorch 1.13 (CPU, the Bazel build) and pip's LibTorch 2.x (CUDA, the GPU nodes' CMake build). Every
// call whose name or signature changed goes through here, so that the rest of the code reads the same on
// both (docs/gpu.md, "LibTorch versions").
#ifndef NMSPARSE_WORKER_COMPAT_TORCH_COMPAT_H_
#define NMSPARSE_WORKER_COMPAT_TORCH_COMPAT_H_

#include <ATen/autocast_mode.h>
#include <ATen/core/Tensor.h>
#include <torch/version.h>

#include <string>
#include <vector>

#if TORCH_VERSION_MAJOR < 2
#include <c10/util/string_utils.h>
#endif

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#if (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_sub.h>
#include <ATen/ops/_fused_adamw.h>
#endif

#define NMSPARSE_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// Gloo's process group. Torch's CMake config defines USE_C10D_GLOO even where the package ships no gloo
// headers (pip's wheels), and another package's gloo headers (Debian's) would not match the gloo built into
// that library: the build says which (NMSPARSE_WITH_GLOO, from CMakeLists.txt or third_party/system.BUILD).
#if defined(NMSPARSE_WITH_GLOO)
#define NMSPARSE_HAS_GLOO NMSPARSE_WITH_GLOO
#elif defined(USE_C10D_GLOO) && __has_include(<gloo/algorithm.h>)
#define NMSPARSE_HAS_GLOO 1
#else
#define NMSPARSE_HAS_GLOO 0
#endif

namespace nmsparse::compat {

// at::scaled_dot_product_attention with its `scale` argument (2.1).
constexpr bool kHaveSdpa = NMSPARSE_TORCH_AT_LEAST(2, 1);

// The key of a parameter in torch::optim::Optimizer::state(): the TensorImpl's address as a string in 1.x,
// the address itself in 2.x.
inline auto OptimizerStateKey(const at::Tensor& param) {
#if NMSPARSE_TORCH_AT_LEAST(2, 0)
  return static_cast<void*>(param.unsafeGetTensorImpl());
#else
  return c10::guts::to_string(param.unsafeGetTensorImpl());
#endif
}

// Autocast state per device type. 2.4 replaced the per-device functions (is_cpu_enabled,
// set_autocast_gpu_dtype, ...) with ones taking the device type; the old ones still link in 2.x but warn.
inline bool IsAutocastEnabled(c10::DeviceType device) {
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline void SetAutocastEnabled(c10::DeviceType device, bool enabled) {
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

inline c10::ScalarType AutocastDtype(c10::DeviceType device) {
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void SetAutocastDtype(c10::DeviceType device, c10::ScalarType dtype) {
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

// The L2 norm of each tensor, in multi-tensor kernels (one launch per chunk of tensors, not one per tensor).
// _foreach_norm exists in both versions.
inline std::vector<at::Tensor> ForeachNorm(at::TensorList tensors) { return at::_foreach_norm(tensors, 2); }

// tensors[i] *= factor, `factor` a 0-dim tensor on the tensors' device (never read on the host): one
// multi-tensor kernel from 2.1, which has _foreach_mul_ by a tensor; a loop of mul_ before.
inline void ForeachMulByTensor(at::TensorList tensors, const at::Tensor& factor) {
#if NMSPARSE_TORCH_AT_LEAST(2, 1)
  at::_foreach_mul_(tensors, factor);
#else
  for (const at::Tensor& t : tensors) const_cast<at::Tensor&>(t).mul_(factor);
#endif
}

// ATen's multi-tensor fused AdamW (one kernel over all parameters of a group): CUDA since 2.0, CPU since 2.4.
// From 2.4 on only, so that the CPU tests of the CMake build check it against the plain optimizer.
constexpr bool kHaveFusedAdamW = NMSPARSE_TORCH_AT_LEAST(2, 4);

// One fused AdamW update of a parameter group (torch.optim.AdamW(fused=True)'s arithmetic): increments the
// device step counters, then updates params, exp_avgs and exp_avg_sqs in place; where `found_inf` ([1]
// float32, the loss scaler's flag) is 1 it changes nothing (GradScaler's skipped step, on the device). Throws
// where this LibTorch has no fused kernel (callers check kHaveFusedAdamW).
inline void FusedAdamW(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                       at::TensorList exp_avg_sqs, at::TensorList steps, double lr, double beta1,
                       double beta2, double weight_decay, double eps,
                       const at::Tensor& found_inf = at::Tensor()) {
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
  at::_foreach_add_(steps, 1);
  const c10::optional<at::Tensor> inf =
      found_inf.defined() ? c10::optional<at::Tensor>(found_inf) : c10::optional<at::Tensor>();
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2,
                    weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/{}, inf);
  // found_inf set: the kernel left params and moments alone; the counters go back, as torch.optim.AdamW does.
  if (found_inf.defined())
    at::_foreach_sub_(steps, std::vector<at::Tensor>(steps.size(), found_inf.reshape({})));
#else
  (void)params, (void)grads, (void)exp_avgs, (void)exp_avg_sqs, (void)steps, (void)lr, (void)beta1,
      (void)beta2, (void)weight_decay, (void)eps, (void)found_inf;
  TORCH_CHECK(false, "fused AdamW needs LibTorch 2.4 or later");
#endif
}

// GradScaler's two kernels: unscale gradients in place and flag inf/NaN in `found_inf` ([1] float32), and
// update scale ([1] float32) and growth tracker ([1] int32) from the flag. Their CPU kernels came with 2.3;
// before that (Debian's 1.13), a composite of tensor ops with the same arithmetic, also device-side.
inline void AmpNonFiniteCheckAndUnscale(at::TensorList grads, at::Tensor& found_inf,
                                        const at::Tensor& inv_scale) {
  if (grads.empty()) return;
#if !NMSPARSE_TORCH_AT_LEAST(2, 3)
  if (!found_inf.is_cuda()) {
    for (const at::Tensor& g : grads) {
      found_inf.copy_(at::maximum(found_inf, g.isfinite().logical_not().any().to(at::kFloat).reshape({1})));
      const_cast<at::Tensor&>(g).mul_(inv_scale);
    }
    return;
  }
#endif
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
}

inline void AmpUpdateScale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                           double growth_factor, double backoff_factor, int64_t growth_interval) {
#if !NMSPARSE_TORCH_AT_LEAST(2, 3)
  if (!scale.is_cuda()) {
    // The kernel's rule: inf -> scale * backoff, tracker 0; else tracker + 1, and at growth_interval the
    // scale grows (when the grown scale is finite) and the tracker restarts.
    const at::Tensor found = found_inf > 0;
    const at::Tensor successful = growth_tracker + 1;
    const at::Tensor grow = found.logical_not().logical_and(successful == growth_interval);
    const at::Tensor grown = scale * static_cast<float>(growth_factor);
    const at::Tensor backed_off = scale * static_cast<float>(backoff_factor);
    scale.copy_(at::where(found, backed_off, at::where(grow.logical_and(grown.isfinite()), grown, scale)));
    growth_tracker.copy_(at::where(found.logical_or(grow), at::zeros_like(successful), successful));
    return;
  }
#endif
  at::_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
}

}  // namespace nmsparse::compat

#endif  // NMSPARSE_WORKER_COMPAT_TORCH_COMPAT_H_
