// Which OpenBLAS core suits a CPU, and whether the core OpenBLAS chose by itself fell short of it. OpenBLAS
// picks its kernels by CPU model number; a model it does not know (a new Xeon behind a hypervisor, for
// OpenBLAS 0.3.21) gets the oldest SSE3 kernels ("Prescott"), about 2.6x slower on the micro ViT
// (docs/nmtrain.md "BLAS"). Plain C++: the rule is tested on any machine; blas_check.h feeds it the real CPU.
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CORE_CHOICE_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CORE_CHOICE_H_

#include <string>
#include <string_view>

namespace nmsparse {

// The widest vector ISA of a CPU (with the OS's support for its registers), or that a BLAS core's kernels
// use. Ordered: a core below the CPU's level leaves vector width unused.
enum class CpuIsa { kUnknown, kSse, kAvx, kAvx2, kAvx512 };

struct CpuFeatures {
  bool avx = false;
  bool avx2 = false;  // With FMA: what OpenBLAS's Haswell and Zen kernels need.
  bool fma = false;
  bool avx512 = false;  // F, CD, BW, DQ and VL: what its SkylakeX kernels need.
  bool amd = false;
};

// "avx512", "avx2", "avx", "sse", "unknown": the label of the metric lines (contract/metric_names.h).
std::string_view CpuIsaName(CpuIsa isa);

CpuIsa WidestIsa(const CpuFeatures& cpu);

// The ISA of an OpenBLAS core name as openblas_get_corename reports it ("Prescott", "Haswell", "SkylakeX",
// any case); kUnknown for a name this table does not know (another architecture, a newer core).
CpuIsa IsaOfOpenBlasCore(std::string_view core);

// The core to ask OpenBLAS for (OPENBLAS_CORETYPE) on `cpu`: "SkylakeX", "Zen" or "Haswell"; empty below
// AVX2, where OpenBLAS's own choice is as good as any.
std::string OpenBlasCoreFor(const CpuFeatures& cpu);

// Whether `core` is a fall-back worth correcting on `cpu`: a known core below AVX2 on a CPU with AVX2 or
// more. An unknown name is never one (it may be newer than this table).
bool IsFallbackCore(std::string_view core, const CpuFeatures& cpu);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CORE_CHOICE_H_
