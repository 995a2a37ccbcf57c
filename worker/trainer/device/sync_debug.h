// The host-sync guard on a GPU (docs/gpu.md, bench/gpu/node_check.sh). With NMTRAIN_SYNC_DEBUG=error in the
// environment, LibTorch's CUDA sync debug mode (c10::cuda::warning_state().set_sync_debug_mode) is on over
// the body of every training step: any synchronising CUDA call there (a blocking copy, .item(), a stream or
// device synchronize, nonzero, ...) throws, naming the operation, and the run fails. Off at the loop's sync
// points, which read the loss by design, and outside the loop. It sees every such call, LibTorch's own
// included; its CPU counterpart is the lint tools/check_host_syncs.sh. Without CUDA (or unset) it does
// nothing.
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_SYNC_DEBUG_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_SYNC_DEBUG_H_

namespace nmsparse {

// The environment variable, and its one accepted value.
inline constexpr char kSyncDebugVariable[] = "NMTRAIN_SYNC_DEBUG";
inline constexpr char kSyncDebugError[] = "error";

class StepSyncDebug {
 public:
  // Reads the variable: unset or empty is off, "error" is on; anything else is std::invalid_argument naming
  // it. `cuda`: whether the run trains on a GPU (elsewhere there is nothing to guard).
  explicit StepSyncDebug(bool cuda);
  StepSyncDebug() = default;  // Off.
  bool on() const { return on_; }
  // Around a step's body: errors on synchronising calls from BeginStep until EndStep.
  void BeginStep() const;
  void EndStep() const;

 private:
  bool on_ = false;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_SYNC_DEBUG_H_
