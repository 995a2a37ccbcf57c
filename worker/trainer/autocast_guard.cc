#include "worker/trainer/autocast_guard.h"

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/models/classifier.h"

namespace nmsparse {

AutocastGuard::AutocastGuard(bool bf16, c10::DeviceType device) {
  if (!bf16) return;
  TORCH_CHECK(device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA,
              "bf16 autocast runs on cpu or cuda, not ", device);
  active_ = true;
  device_ = device;
  previous_enabled_ = compat::IsAutocastEnabled(device);
  previous_dtype_ = compat::AutocastDtype(device);
  compat::SetAutocastEnabled(device, true);
  compat::SetAutocastDtype(device, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // The cache holds bf16 copies of fp32 leaf weights for the scope's forward pass; after the optimizer step
  // they would be stale, so the outermost guard drops them (torch.autocast.__exit__).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::SetAutocastEnabled(device_, previous_enabled_);
  compat::SetAutocastDtype(device_, previous_dtype_);
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
