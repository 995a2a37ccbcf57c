// The slots a node offers: its GPUs (found with nvidia-smi, or given with --gpus) and CPU slots.
#ifndef NMSPARSE_WORKER_AGENT_SLOTS_H_
#define NMSPARSE_WORKER_AGENT_SLOTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::agent {

struct GpuInfo {
  int device = 0;  // CUDA device number.
  std::string name;
  uint64_t memory_mb = 0;
};

// A node's slots; slot i's index is i, and devices[i] is its CUDA device (-1 for a CPU slot).
struct NodeSlots {
  std::vector<v1::Slot> slots;
  std::vector<int> devices;
};

// Parses `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits` output.
std::vector<GpuInfo> ParseNvidiaSmiQuery(absl::string_view output);

// Parses `nvidia-smi -L` output ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)"); memory stays 0.
std::vector<GpuInfo> ParseNvidiaSmiList(absl::string_view output);

// The GPUs nvidia-smi reports; empty when it is missing or fails.
std::vector<GpuInfo> DetectGpus();

// Builds the slots from the flags. `gpus_flag`: "" or "auto" detects; "0" or "none" means no GPU; a number N
// takes the first N detected GPUs (or devices 0..N-1 when none are detected); a list "0,2" names CUDA
// devices. `cpu_slots` < 0 means: one CPU slot if there is no GPU, else none.
absl::StatusOr<NodeSlots> BuildSlots(const std::string& gpus_flag, int cpu_slots,
                                     const std::vector<GpuInfo>& detected);

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_SLOTS_H_
