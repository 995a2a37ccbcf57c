// Opens the device a rank trains on (device_choice.h decides which) and describes every rank's device for the
// metric lines, so that a run on GPU slots shows which GPU each rank really used.
#ifndef NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_SETUP_H_
#define NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_SETUP_H_

#include <torch/types.h>

#include <string>
#include <vector>

namespace nmsparse {

class Distributed;

struct OpenedDevice {
  torch::Device device = torch::kCPU;
  std::string description;  // "cpu", "cuda:0 NVIDIA H100 80GB HBM3", ...
};

// Chooses the device from --device and LOCAL_RANK and makes a GPU the current CUDA device (so that no rank
// creates a context on GPU 0 besides its own). Throws TrainerError (exit 2) when the GPU asked for is not
// there: a GPU run never silently trains on the CPU.
OpenedDevice OpenDevice(const std::string& flag, int local_rank);

// Makes `device` the calling thread's current CUDA device; nothing for the CPU. Loader threads call it before
// allocating pinned memory, which would otherwise create a CUDA context on GPU 0 in every rank's process.
void UseDeviceOnThisThread(torch::Device device);

// Every rank's description, in rank order (a collective: all ranks call it).
std::vector<std::string> GatherDeviceDescriptions(Distributed& dist, const std::string& mine);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DEVICE_DEVICE_SETUP_H_
