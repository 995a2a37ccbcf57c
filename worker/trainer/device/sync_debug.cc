#include "worker/trainer/device/sync_debug.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef NMSPARSE_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace nmsparse {

StepSyncDebug::StepSyncDebug(bool cuda) {
  const char* value = std::getenv(kSyncDebugVariable);
  const std::string mode = value != nullptr ? value : "";
  if (!mode.empty() && mode != kSyncDebugError) {
    throw std::invalid_argument(std::string(kSyncDebugVariable) + "='" + mode + "': the only mode is '" +
                                kSyncDebugError + "'");
  }
#ifdef NMSPARSE_WITH_CUDA
  on_ = cuda && mode == kSyncDebugError;
#else
  (void)cuda;
#endif
}

void StepSyncDebug::BeginStep() const {
#ifdef NMSPARSE_WITH_CUDA
  if (on_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
#endif
}

void StepSyncDebug::EndStep() const {
#ifdef NMSPARSE_WITH_CUDA
  if (on_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
#endif
}

}  // namespace nmsparse
