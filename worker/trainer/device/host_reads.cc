#include "worker/trainer/device/host_reads.h"

#include <torch/torch.h>

#include <atomic>

namespace nmsparse {
namespace {

std::atomic<int64_t> g_reads{0};

}  // namespace

std::vector<double> ReadToHost(const torch::Tensor& values) {
  g_reads.fetch_add(1, std::memory_order_relaxed);
  const torch::Tensor host = values.detach().reshape(-1).to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
}

int64_t HostReadCount() { return g_reads.load(std::memory_order_relaxed); }

}  // namespace nmsparse
