// bf16 or fp16 autocast of a forward pass, scoped: LibTorch's autocast state (enabled flag and
// lower-precision dtype of the device type) is set while the guard lives and restored when it goes, and the
// autocast weight cache is cleared on leaving the outermost guard, as torch.autocast's __exit__ does.
// Backward passes run after the guard is gone, so gradients flow in the dtypes autocast chose and reach the
// fp32 weights as fp32.
#ifndef NMSPARSE_WORKER_TRAINER_PRECISION_AUTOCAST_GUARD_H_
#define NMSPARSE_WORKER_TRAINER_PRECISION_AUTOCAST_GUARD_H_

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace at {
class Tensor;
}  // namespace at

namespace nmsparse {

class ClassifierImpl;

class AutocastGuard {
 public:
  // `dtype` Undefined: does nothing (fp32 runs). Otherwise autocast to `dtype` (bfloat16 or float16) on
  // `device` (kCPU: CPU autocast; kCUDA: CUDA autocast).
  AutocastGuard(c10::ScalarType dtype, c10::DeviceType device);
  // bfloat16 autocast when `bf16`, else nothing.
  AutocastGuard(bool bf16, c10::DeviceType device)
      : AutocastGuard(bf16 ? c10::ScalarType::BFloat16 : c10::ScalarType::Undefined, device) {}
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_ = c10::DeviceType::CPU;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

// The autocast dtype of resources.precision: BFloat16 for bf16, Half for fp16, Undefined (none) for fp32.
c10::ScalarType AutocastDtypeOf(const std::string& precision);

// Whether this LibTorch autocasts to float16 on `device`: CUDA always; the CPU from 2.4 on (Debian's 1.13
// CPU autocast is bfloat16 only).
bool HasFp16Autocast(c10::DeviceType device);

// The model's logits for `images` as float32, its forward pass under autocast to `autocast_dtype` (on the
// images' device; Undefined: none): losses and metrics are computed in fp32 whatever the precision (timm's
// recipe in effect).
at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, c10::ScalarType autocast_dtype);
at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, bool bf16);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_PRECISION_AUTOCAST_GUARD_H_
