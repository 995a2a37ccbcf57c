#include "worker/trainer/autocast_guard.h"

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include "worker/trainer/models/classifier.h"

namespace nmsparse {

AutocastGuard::AutocastGuard(bool bf16, c10::DeviceType device) {
  if (!bf16) return;
  TORCH_CHECK(device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA,
              "bf16 autocast runs on cpu or cuda, not ", device);
  active_ = true;
  cuda_ = device == c10::DeviceType::CUDA;
  if (cuda_) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  }
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // The cache holds bf16 copies of fp32 leaf weights for the scope's forward pass; after the optimizer step
  // they would be stale, so the outermost guard drops them (torch.autocast.__exit__).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (cuda_) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
}

at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, bool bf16) {
  at::Tensor logits;
  {
    AutocastGuard autocast(bf16, images.device().type());
    logits = model.forward(images);
  }
  return logits.to(at::kFloat);  // No-op (the same tensor) for fp32 logits.
}

}  // namespace nmsparse
