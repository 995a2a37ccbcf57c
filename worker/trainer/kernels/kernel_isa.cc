#include "worker/trainer/kernels/kernel_isa.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "worker/trainer/kernels/avx2_math.h"
#include "worker/trainer/kernels/avx512_math.h"

namespace nmsparse {
namespace {

std::atomic<KernelIsa> cap{KernelIsa::kAvx512};

// NMSPARSE_KERNELS_MAX_ISA=avx2 (or scalar) rules the wider paths out, to measure one against the other or
// to rule a path out when chasing a numerical question.
KernelIsa EnvironmentCap() {
  const char* value = std::getenv("NMSPARSE_KERNELS_MAX_ISA");
  const std::string name = value == nullptr ? "" : value;
  if (name == "scalar") return KernelIsa::kScalar;
  if (name == "avx2") return KernelIsa::kAvx2;
  return KernelIsa::kAvx512;
}

}  // namespace

KernelIsa CpuKernelIsa() {
#ifdef NMSPARSE_X86
  if (avx512::CpuHasAvx512()) return KernelIsa::kAvx512;
  if (avx2::CpuHasAvx2Fma()) return KernelIsa::kAvx2;
#endif
  return KernelIsa::kScalar;
}

KernelIsa ActiveKernelIsa() {
  static const KernelIsa allowed = std::min(CpuKernelIsa(), EnvironmentCap());
  return std::min(allowed, cap.load(std::memory_order_relaxed));
}

void SetKernelIsaCap(KernelIsa isa) { cap.store(isa, std::memory_order_relaxed); }

const char* KernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kAvx512:
      return "avx512";
    case KernelIsa::kAvx2:
      return "avx2";
    case KernelIsa::kScalar:
      break;
  }
  return "scalar";
}

}  // namespace nmsparse
