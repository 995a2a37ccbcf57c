// nmtrain's command-line flags that the worker agent passes (worker/agent/run_launch.cc) and nmtrain parses
// (worker/trainer/main.cc; docs/nmtrain.md has them all). Standard library only, like all of contract/.
#ifndef NMSPARSE_CONTRACT_TRAINER_FLAGS_H_
#define NMSPARSE_CONTRACT_TRAINER_FLAGS_H_

namespace nmsparse::contract {

constexpr char kSpecFlag[] = "--spec";      // The run's spec file (contract/run_directory.h: kSpecFileName).
constexpr char kOutFlag[] = "--out";        // The run directory: checkpoints and the spec nmtrain trained.
constexpr char kResumeFlag[] = "--resume";  // Continue from the run directory's checkpoint when present.
constexpr char kThreadsFlag[] = "--threads";  // Intra-op threads per rank.

// A fork: the agent passes `--init-from <work_dir>/runs/<parent run id>`, a directory named by the parent's
// run id only, never by a spec or a request. nmtrain starts from the checkpoint in that directory when its
// own --out directory has none yet (else it resumes its own), and fails with kExitUsage when there is none.
constexpr char kInitFromFlag[] = "--init-from";

// Devices. The agent passes `--device cpu` to ranks on CPU slots and `--device cuda` to ranks on GPU slots,
// with CUDA_VISIBLE_DEVICES listing the run's GPUs in rank order and LOCAL_RANK = RANK: rank r opens
// cuda:r, which is the r-th listed GPU. Every rank of a run sees all of the run's GPUs, so NCCL can use
// peer-to-peer copies between them.
constexpr char kDeviceFlag[] = "--device";
constexpr char kDeviceCpu[] = "cpu";
constexpr char kDeviceCuda[] = "cuda";

// Export (docs/interop.md): `nmtrain --export CHECKPOINT -o DIR [--weights final|ema] [--dtype fp32|bf16]
// [--spec FILE]` writes the run's deployable model in timm's format; the spec defaults to the spec.yaml
// beside the checkpoint (kSpecFileName).
constexpr char kExportFlag[] = "--export";
constexpr char kExportOutFlag[] = "-o";
constexpr char kExportWeightsFlag[] = "--weights";  // final (default) or ema.
constexpr char kExportDtypeFlag[] = "--dtype";      // fp32 (default) or bf16.

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_TRAINER_FLAGS_H_
