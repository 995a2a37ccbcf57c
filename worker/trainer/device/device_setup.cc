#include "worker/trainer/device/device_setup.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "worker/trainer/device/device_choice.h"
#include "worker/trainer/distributed/distributed.h"
#include "worker/trainer/trainer_error.h"

#ifdef NMSPARSE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace nmsparse {
namespace {

constexpr int64_t kDescriptionBytes = 128;

// Sets the current CUDA device and returns its name; "" in builds without CUDA (never reached there: no GPU
// is visible, so ChooseDevice refuses first).
std::string UseGpu(int index) {
#ifdef NMSPARSE_WITH_CUDA
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
  return at::cuda::getDeviceProperties(index)->name;
#else
  (void)index;
  return "";
#endif
}

}  // namespace

OpenedDevice OpenDevice(const std::string& flag, int local_rank) {
  const int visible = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  auto choice = ChooseDevice(flag, local_rank, visible, std::getenv("CUDA_VISIBLE_DEVICES"));
  if (!choice.ok()) throw TrainerError(kExitUsage, std::string(choice.status().message()));
  OpenedDevice opened;
  if (!choice->cuda) {
    opened.description = DescribeDevice(*choice, "");
    return opened;
  }
  opened.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(choice->index));
  opened.description = DescribeDevice(*choice, UseGpu(choice->index));
  return opened;
}

void UseDeviceOnThisThread(torch::Device device) {
  if (device.is_cuda()) UseGpu(device.index());
}

std::vector<std::string> GatherDeviceDescriptions(Distributed& dist, const std::string& mine) {
  auto bytes = torch::zeros({kDescriptionBytes}, torch::kUInt8);
  std::memcpy(bytes.data_ptr<uint8_t>(), mine.data(),
              std::min<size_t>(mine.size(), static_cast<size_t>(kDescriptionBytes - 1)));
  const torch::Tensor table = dist.AllGatherBytes(bytes).contiguous();
  std::vector<std::string> all;
  for (int64_t r = 0; r < table.size(0); ++r) {
    const char* row = reinterpret_cast<const char*>(table[r].data_ptr<uint8_t>());
    all.emplace_back(row, strnlen(row, kDescriptionBytes));
  }
  return all;
}

}  // namespace nmsparse
