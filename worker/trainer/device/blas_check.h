// The BLAS nmtrain calls, the kernels it chose, and the correction of a generic fall-back (docs/nmtrain.md
// "BLAS"). OpenBLAS reads OPENBLAS_CORETYPE once, when the library loads, before main(): so the correction
// re-executes nmtrain (same pid, arguments and descriptors) with the variable set. Never when the user set
// it: on some processors it is set on purpose, because older OpenBLAS builds compute wrong results there.
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CHECK_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CHECK_H_

#include <string>

namespace nmsparse {

// Set by nmtrain, with OPENBLAS_CORETYPE, when it re-executes itself: the core OpenBLAS had chosen. It tells
// the new image that the variable is nmtrain's, not the user's, and that it must not re-execute again.
inline constexpr char kBlasCorrectedFromVariable[] = "NMTRAIN_BLAS_CORRECTED_FROM";
// Tests: the core nmtrain takes OpenBLAS to have chosen before any correction, so that the re-execution is
// exercised on a CPU that OpenBLAS recognises.
inline constexpr char kTestBlasCoreVariable[] = "NMTRAIN_TEST_BLAS_CORE";

struct BlasFacts {
  std::string library;    // "OpenBLAS 0.3.21 (libblas.so.3)", another library's file name, or "none".
  std::string core;       // openblas_get_corename(); "n/a" for a BLAS that reports none (MKL).
  std::string cpu_isa;    // CpuIsaName() of this CPU.
  std::string cpu_model;  // The CPU's brand string.
  std::string how;        // How the core came about: "chosen by OpenBLAS", "corrected from Prescott", ...
  std::string warning;    // Non-empty when the core is below the CPU and stays so: why.
};

// Re-executes this program (argv as main received it) with OPENBLAS_CORETYPE set to the core that fits the
// CPU, when OpenBLAS fell back to a generic core on a CPU with AVX2 or AVX-512. Returns when there is nothing
// to do: a fitting core, the variable set by the user, already re-executed, no OpenBLAS with DYNAMIC_ARCH,
// or the exec failed (InspectBlas then warns).
void ReexecForFittingBlasCore(char** argv);

// What this process runs now; cheap enough to call more than once.
BlasFacts InspectBlas();

// "BLAS OpenBLAS 0.3.21 (libblas.so.3), core SkylakeX (chosen by OpenBLAS), CPU Intel(R) Xeon(R) Processor
// (avx512)": nmtrain's log line.
std::string DescribeBlas(const BlasFacts& facts);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_BLAS_CHECK_H_
