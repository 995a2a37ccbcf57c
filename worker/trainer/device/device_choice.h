// Which device a rank of nmtrain trains on, decided from --device, LOCAL_RANK and the GPUs this process sees
// (the contract with the agent: contract/trainer_flags.h). Plain C++, so that the rule is tested on
// machines without a GPU; the trainer feeds it torch::cuda::device_count().
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_CHOICE_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_CHOICE_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse {

struct DeviceChoice {
  bool cuda = false;
  int index = 0;         // CUDA device index in this process (among the visible GPUs).
  std::string physical;  // The GPU as the node numbers it: the index-th entry of CUDA_VISIBLE_DEVICES.
};

// `flag`: "cpu", "cuda" (GPU LOCAL_RANK) or "cuda:K". `visible_gpus`: GPUs this process can open (0 for a
// LibTorch without CUDA). `cuda_visible_devices`: the variable's value, or null when unset. Asking for a GPU
// never falls back to the CPU: it is an error naming the rank, the count and the variable.
absl::StatusOr<DeviceChoice> ChooseDevice(const std::string& flag, int local_rank, int visible_gpus,
                                          const char* cuda_visible_devices);

// "cpu", or "cuda:1 (GPU 2) NVIDIA H100 80GB HBM3" (the GPU number left out when it equals the index).
std::string DescribeDevice(const DeviceChoice& choice, const std::string& gpu_name);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_CHOICE_H_
