// bf16 autocast of a forward pass, scoped: LibTorch's autocast state (enabled flag and lower-precision dtype
// of the device type) is set while the guard lives and restored when it goes, and the autocast weight cache
// is cleared on leaving the outermost guard, as torch.autocast's __exit__ does. Backward passes run after the
// guard is gone, so gradients flow in the dtypes autocast chose and reach the fp32 weights as fp32.
#ifndef NMSPARSE_WORKER_TRAINER_AUTOCAST_GUARD_H_
#define NMSPARSE_WORKER_TRAINER_AUTOCAST_GUARD_H_

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace at {
class Tensor;
}  // namespace at

namespace nmsparse {

class ClassifierImpl;

class AutocastGuard {
 public:
  // `bf16` false: does nothing (fp32 runs). Otherwise bfloat16 autocast on `device` (kCPU: CPU autocast;
  // kCUDA: CUDA autocast, the GPU dtype set to bfloat16).
  AutocastGuard(bool bf16, c10::DeviceType device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_ = c10::DeviceType::CPU;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

// The model's logits for `images` as float32, its forward pass under bf16 autocast (on the images' device)
// when `bf16`: losses and metrics are computed in fp32 whatever the precision (timm's recipe in effect).
at::Tensor ForwardLogits(ClassifierImpl& model, const at::Tensor& images, bool bf16);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_AUTOCAST_GUARD_H_
