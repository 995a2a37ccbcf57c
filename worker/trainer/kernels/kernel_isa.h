// Which vector instruction set the fused CPU kernels run (gelu_rows, softmax_rows, bias_rows, the N:M mask
// selection of worker/sparsity): the widest the CPU has, chosen at run time so that one binary serves old and
// new x86-64 CPUs, optionally capped to measure one path against another in the same binary.
#ifndef NMSPARSE_WORKER_TRAINER_KERNELS_KERNEL_ISA_H_
#define NMSPARSE_WORKER_TRAINER_KERNELS_KERNEL_ISA_H_

namespace nmsparse {

// Ordered by width: a path may run wherever a wider one does.
enum class KernelIsa { kScalar, kAvx2, kAvx512 };

// The widest path this CPU runs: AVX-512 (F, DQ, BW, VL), AVX2 + FMA, or plain C++.
KernelIsa CpuKernelIsa();

// The path the kernels take: CpuKernelIsa(), capped by $NMSPARSE_KERNELS_MAX_ISA (avx2, scalar; read once)
// and by SetKernelIsaCap.
KernelIsa ActiveKernelIsa();

// Caps ActiveKernelIsa() from now on (kAvx512: no cap). For benchmarks that time the paths side by side in
// one process; a training run never calls it.
void SetKernelIsaCap(KernelIsa cap);

// "scalar", "avx2", "avx512".
const char* KernelIsaName(KernelIsa isa);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_KERNELS_KERNEL_ISA_H_
