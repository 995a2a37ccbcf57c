// One switch for the trainer's fused CPU kernels, so that a suspected kernel bug can be ruled out by
// rerunning with ATen's composite ops: NMSPARSE_FUSED_KERNELS=0 in the environment, or
// SetFusedKernelsEnabled(false).
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_KERNELS_SWITCH_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_KERNELS_SWITCH_H_

namespace nmsparse {

bool FusedKernelsEnabled();
void SetFusedKernelsEnabled(bool enabled);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_FUSED_KERNELS_SWITCH_H_
