#include "worker/trainer/kernels/fused_kernels_switch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace nmsparse {
namespace {

std::atomic<bool>& Flag() {
  static std::atomic<bool> enabled{[] {
    const char* env = std::getenv("NMSPARSE_FUSED_KERNELS");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }()};
  return enabled;
}

}  // namespace

bool FusedKernelsEnabled() { return Flag().load(std::memory_order_relaxed); }

void SetFusedKernelsEnabled(bool enabled) { Flag().store(enabled, std::memory_order_relaxed); }

}  // namespace nmsparse
