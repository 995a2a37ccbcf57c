#include "worker/trainer/distributed/distributed.h"

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "worker/compat/torch_compat.h"
#if NMSPARSE_HAS_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef NMSPARSE_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <functional>
#include <iostream>

#include "absl/strings/numbers.h"
#include "contract/rank_environment.h"
#include "worker/trainer/device/host_reads.h"

namespace nmsparse {
namespace {

int IntFromEnv(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < 0) {
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + value +
                                "' is not a non-negative integer");
  }
  return parsed;
}

// c10::Error's what() carries a C++ backtrace; one line is enough for a log.
std::string Message(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

}  // namespace

DistributedEnv ReadDistributedEnv() {
  DistributedEnv env;
  env.rank = IntFromEnv(contract::kRankVariable, 0);
  env.world_size = IntFromEnv(contract::kWorldSizeVariable, 1);
  env.local_rank = IntFromEnv(contract::kLocalRankVariable, env.rank);
  if (const char* addr = std::getenv(contract::kMasterAddrVariable); addr != nullptr && *addr != '\0')
    env.master_addr = addr;
  env.master_port = IntFromEnv(contract::kMasterPortVariable, contract::kDefaultMasterPort);
  if (env.world_size < 1 || env.rank >= env.world_size) {
    throw std::invalid_argument("RANK=" + std::to_string(env.rank) +
                                " must be below WORLD_SIZE=" + std::to_string(env.world_size));
  }
  if (env.master_port > 65535) throw std::invalid_argument("MASTER_PORT must be below 65536");
  return env;
}

// The group's collectives as functions: LibTorch 1.x derives the groups from ProcessGroup, 2.x from Backend.
struct Distributed::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  std::function<void(std::vector<at::Tensor>&)> allreduce;
  std::function<std::function<void()>(std::vector<at::Tensor>&)> allreduce_async;  // Returns the wait.
  std::function<void(std::vector<at::Tensor>&)> broadcast;
  std::function<void()> shutdown;  // NCCL: ends the communicators (and their watchdog) before exit.

  template <typename Group>
  void Bind(c10::intrusive_ptr<Group> group) {
    allreduce = [group](std::vector<at::Tensor>& t) { group->allreduce(t)->wait(); };
    allreduce_async = [group](std::vector<at::Tensor>& t) -> std::function<void()> {
      auto work = group->allreduce(t);
      return [work] { work->wait(); };
    };
    broadcast = [group](std::vector<at::Tensor>& t) { group->broadcast(t)->wait(); };
  }
};

Distributed::Distributed(const DistributedEnv& env, std::chrono::milliseconds timeout, bool use_nccl,
                         torch::Device device)
    : env_(env), device_(device), impl_(std::make_unique<Impl>()) {
  if (env_.world_size <= 1) return;
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(env_.master_port);
    options.isServer = env_.rank == 0;
    options.numWorkers = env_.world_size;
    options.waitWorkers = true;
    options.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env_.master_addr, options);
#ifdef NMSPARSE_WITH_NCCL
    if (use_nccl) {
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      auto nccl =
          c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, env_.rank, env_.world_size, options);
      impl_->Bind(nccl);
#if NMSPARSE_TORCH_AT_LEAST(2, 4)
      // Without it the communicators are torn down by static destructors, after CUDA may be gone (PyTorch
      // warns that the process group was not destroyed; hangs have been reported).
      impl_->shutdown = [nccl] { nccl->shutdown(); };
#endif
      return;
    }
#else
    if (use_nccl) throw DistributedError("NCCL requested but this nmtrain was built without NCCL");
#endif
#if NMSPARSE_HAS_GLOO
    auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (contract::IsLoopbackAddress(env_.master_addr)) {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    impl_->Bind(c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env_.rank, env_.world_size, gloo));
#else
    throw DistributedError("this nmtrain was built without Gloo; multi-rank CPU runs need it");
#endif
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    throw DistributedError(std::string("rendezvous at ") + env_.master_addr + ":" +
                           std::to_string(env_.master_port) + " failed: " + Message(e));
  }
}

Distributed::~Distributed() {
  if (!impl_ || !impl_->shutdown) return;
  try {
    impl_->shutdown();
  } catch (const std::exception& e) {  // At exit: report, never throw.
    std::cerr << "nmtrain: warning: shutting the process group down failed: " << Message(e) << "\n";
  }
}

void Distributed::AllReduceSum(torch::Tensor& flat) {
  try {
    std::vector<torch::Tensor> tensors = {flat};
    impl_->allreduce(tensors);
  } catch (const std::exception& e) {
    throw DistributedError("all-reduce failed (a rank died or timed out): " + Message(e));
  }
}

std::function<void()> Distributed::AllReduceSumAsync(const torch::Tensor& flat) {
  try {
    std::vector<torch::Tensor> tensors = {flat};
    std::function<void()> wait = impl_->allreduce_async(tensors);
    return [wait] {
      try {
        wait();
      } catch (const std::exception& e) {
        throw DistributedError("all-reduce failed (a rank died or timed out): " + Message(e));
      }
    };
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    throw DistributedError("all-reduce failed to start: " + Message(e));
  }
}

void Distributed::BroadcastModel(torch::nn::Module& model) {
  if (env_.world_size <= 1) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors;
  for (auto& p : model.parameters()) tensors.push_back(p);
  for (auto& b : model.buffers()) tensors.push_back(b);
  for (auto& t : tensors) {
    try {
      std::vector<torch::Tensor> one = {t.data()};
      impl_->broadcast(one);
    } catch (const std::exception& e) {
      throw DistributedError("broadcast of the initial model failed: " + Message(e));
    }
  }
}

void Distributed::AverageGradients(const std::vector<torch::Tensor>& params, int64_t bucket_bytes) {
  if (env_.world_size <= 1) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> bucket;
  int64_t bytes = 0;
  auto flush = [&] {
    if (bucket.empty()) return;
    std::vector<torch::Tensor> flats;
    for (auto& g : bucket) flats.push_back(g.reshape(-1));
    auto flat = torch::cat(flats);
    AllReduceSum(flat);
    flat.div_(static_cast<double>(env_.world_size));
    int64_t offset = 0;
    for (auto& g : bucket) {
      g.copy_(flat.slice(0, offset, offset + g.numel()).view_as(g));
      offset += g.numel();
    }
    bucket.clear();
    bytes = 0;
  };
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;  // Same on every rank: the same model and graph run everywhere.
    bucket.push_back(p.grad());
    bytes += p.grad().numel() * p.grad().element_size();
    if (bytes >= bucket_bytes) flush();
  }
  flush();
}

// An all-reduce of a [world, n] table where each rank fills its own row: the one collective every backend
// here has (NCCL included), exact for byte values in float32.
torch::Tensor Distributed::AllGatherBytes(const torch::Tensor& bytes) {
  auto flat = bytes.to(torch::kCPU).contiguous().view(-1);
  if (env_.world_size <= 1) return flat.unsqueeze(0).clone();
  auto table = torch::zeros({env_.world_size, flat.numel()}, torch::kFloat32);
  table[env_.rank].copy_(flat.to(torch::kFloat32));
  auto on_device = table.to(device_).view(-1);
  AllReduceSum(on_device);
  return on_device.view({env_.world_size, flat.numel()}).to(torch::kCPU).to(torch::kUInt8);
}

std::vector<double> Distributed::SumAcrossRanks(const std::vector<double>& values) {
  if (env_.world_size <= 1) return values;
  auto t = torch::tensor(values, torch::kFloat64).to(device_);
  AllReduceSum(t);
  return ReadToHost(t);
}

void Distributed::Barrier() {
  if (env_.world_size <= 1) return;
  SumAcrossRanks({0.0});
}

}  // namespace nmsparse
