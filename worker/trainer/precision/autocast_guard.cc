#include "worker/trainer/precision/autocast_guard.h"

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include "worker/compat/torch_compat.h"
#include "worker/trainer/models/classifier.h"

namespace nmsparse {

AutocastGuard::AutocastGuard(c10::ScalarType dtype, c10::DeviceType device) {
  if (dtype == c10::ScalarType::Undefined) return;
  TORCH_CHECK(device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA,
              "autocast runs on cpu or cuda, not ", device);
  TORCH_CHECK(dtype == at::kBFloat16 || (dtype == at::kHalf && HasFp16Autocast(device)), "no ", dtype,
              " autocast on ", device, " in this LibTorch");
  active_ = true;
  device_ = device;
  previous_enabled_ = compat::IsAutocastEnabled(device);
  previous_dtype_ = compat::AutocastDtype(device);
  compat::SetAutocastEnabled(device, true);
  compat::SetAutocastDtype(device, dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // The cache holds low-precision copies of fp32 leaf weights for the scope's forward pass; after the
  // optimizer step they would be stale, so the outermost guard drops them (torch.autocast.__exit__).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::SetAutocastEnabled(device_, previous_enabled_);
  compat::SetAutocastDtype(device_, previous_dtype_);
}

c10::ScalarType AutocastDtypeOf(const std::string& precision) {
  if (precision == "bf16") return at::kBFloat16;
  if (precision == "fp16") return at::kHalf;
  return c10::ScalarType::Undefined;
}

bool HasFp16Autocast(c10::DeviceType device) {
  return device == c10::DeviceType::CUDA || NMSPARSE_TORCH_AT_LEAST(2, 4);
}

at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, c10::ScalarType autocast_dtype) {
  at::Tensor logits;
  {
    AutocastGuard autocast(autocast_dtype, images.device().type());
    logits = model.forward(images);
  }
  return logits.to(at::kFloat);  // No-op (the same tensor) for fp32 logits.
}

at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, bool bf16) {
  return ForwardLogits(model, images, bf16 ? c10::ScalarType::BFloat16 : c10::ScalarType::Undefined);
}

}  // namespace nmsparse
