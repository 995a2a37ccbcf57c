// Multi-process data parallelism over c10d: a TCPStore rendezvous at MASTER_ADDR:MASTER_PORT and a Gloo
// process group (NCCL in CUDA builds with NMSPARSE_WITH_NCCL). The environment names the rank as torchrun
// does: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Every collective has a timeout, so that when
// a rank dies the others fail with DistributedError (nmtrain exit code 5) instead of hanging. With WORLD_SIZE
// unset or 1 every operation is a no-op.
#ifndef NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DISTRIBUTED_H_
#define NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DISTRIBUTED_H_

#include <torch/nn/module.h>
#include <torch/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmsparse {

class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Reads the variables; throws std::invalid_argument naming a malformed one.
DistributedEnv ReadDistributedEnv();

class Distributed {
 public:
  // Rendezvous (waits up to `timeout` for all ranks); throws DistributedError when it fails.
  // `device`: where collectives' tensors live (a CUDA device for NCCL).
  Distributed(const DistributedEnv& env, std::chrono::milliseconds timeout, bool use_nccl = false,
              torch::Device device = torch::kCPU);
  ~Distributed();

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  bool is_root() const { return env_.rank == 0; }

  // Copies rank 0's parameters and buffers to every rank.
  void BroadcastModel(torch::nn::Module& model);
  // Averages the gradients of `params` over ranks, in flat buckets of about `bucket_bytes`, after backward
  // (the plain way; training overlaps it with backward: gradient_averager.h).
  void AverageGradients(const std::vector<torch::Tensor>& params, int64_t bucket_bytes = 25 << 20);
  // Starts an in-place sum of `flat` over ranks and returns at once; the returned function waits for it
  // (throwing DistributedError when it failed). Every rank must start its sums in the same order.
  std::function<void()> AllReduceSumAsync(const torch::Tensor& flat);
  // Element-wise sum over ranks (metrics, stop flags).
  std::vector<double> SumAcrossRanks(const std::vector<double>& values);
  // Every rank's `bytes` (a uint8 tensor of the same size on every rank), as [world_size, n] uint8 on CPU.
  torch::Tensor AllGatherBytes(const torch::Tensor& bytes);
  void Barrier();

 private:
  void AllReduceSum(torch::Tensor& flat);
  struct Impl;
  DistributedEnv env_;
  torch::Device device_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DISTRIBUTED_DISTRIBUTED_H_
