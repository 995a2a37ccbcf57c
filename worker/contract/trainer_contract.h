// The contract between nmtrain and the worker agent that starts it (docs/nmtrain.md): exit codes, the kinds
// of metric line rank 0 prints, and how the agent tells each rank which device to train on. Both sides
// include this header; it depends on the standard library only, so that neither LibTorch nor gRPC crosses
// over.
#ifndef NMSPARSE_WORKER_CONTRACT_TRAINER_CONTRACT_H_
#define NMSPARSE_WORKER_CONTRACT_TRAINER_CONTRACT_H_

#include <string>

namespace nmsparse::contract {

// Exit codes.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;     // Bad command line or spec (unknown key, bad value, N:M that does not fit).
constexpr int kExitData = 3;      // Dataset missing, unreadable or not matching the model.
constexpr int kExitTraining = 4;  // Torch exception, non-finite loss, checkpoint I/O.
constexpr int kExitDistributed = 5;   // Rendezvous failed, a rank died, a collective timed out.
constexpr int kExitTerminated = 143;  // SIGTERM: stopped at a step boundary after writing a checkpoint.
constexpr int kExitKilled = 137;      // SIGKILL (as a shell reports it).

// Whether an exit is permanent: every attempt of the same spec would end the same way, so the coordinator
// ends the run FAILED at once instead of spending its retries. Only a bad spec (or command line) is: a data,
// training or distributed error may be this worker's or this moment's, and a signal is a crash or a stop.
constexpr bool IsPermanentExit(int code) { return code == kExitUsage; }

// What an exit code means, for run messages.
inline std::string DescribeExit(int code) {
  switch (code) {
    case kExitOk:
      return "ok";
    case kExitUsage:
      return "bad spec";
    case kExitData:
      return "data error";
    case kExitTraining:
      return "training error";
    case kExitDistributed:
      return "distributed failure";
    case kExitTerminated:
      return "terminated (SIGTERM)";
    case kExitKilled:
      return "killed (SIGKILL)";
    default:
      return code > 128 ? "killed by signal " + std::to_string(code - 128) : "error";
  }
}

// Metric lines: one flat JSON object per line on rank 0's stdout, {"kind": <kind>, "epoch": E, "step": S,
// ...}.
constexpr char kKindKey[] = "kind";
constexpr char kKindEpoch[] = "epoch";
constexpr char kKindStep[] = "step";
constexpr char kKindFinal[] = "final";  // Its numbers are the run's final metrics.

// Devices. The agent passes `--device cpu` to ranks on CPU slots and `--device cuda` to ranks on GPU slots,
// with CUDA_VISIBLE_DEVICES listing the run's GPUs in rank order and LOCAL_RANK = RANK: rank r opens
// cuda:r, which is the r-th listed GPU. Every rank of a run sees all of the run's GPUs, so NCCL can use
// peer-to-peer copies between them.
constexpr char kDeviceFlag[] = "--device";
constexpr char kDeviceCpu[] = "cpu";
constexpr char kDeviceCuda[] = "cuda";
// Labels of the epoch and final lines: rank 0's device ("cuda:0 (GPU 2) NVIDIA H100 80GB HBM3", "cpu") and
// every rank's, joined with "; " in rank order.
constexpr char kDeviceLabel[] = "device";
constexpr char kDevicesLabel[] = "devices";

// Per semi-structured 2:4 linear (docs/accelerated-2-4.md), in every epoch line: the label
// "semi_structured/<layer>" says which path its last forward took and why ("weight_2:4 masked dense (device
// cpu)"), the value "speedup_2_4/<layer>" is dense / 2:4 GPU time of its GEMM (0 when not timed).
constexpr char kSemiStructuredLabelPrefix[] = "semi_structured/";
constexpr char kSpeedup24ValuePrefix[] = "speedup_2_4/";

}  // namespace nmsparse::contract

#endif  // NMSPARSE_WORKER_CONTRACT_TRAINER_CONTRACT_H_
