// What the agent starts for one run attempt: the run's identity, spec and directory, the trainer binary, and
// one device per rank; and the command line and environment each rank gets from that (the device contract in
// contract/trainer_flags.h).
#ifndef NMSPARSE_WORKER_AGENT_RUN_LAUNCH_H_
#define NMSPARSE_WORKER_AGENT_RUN_LAUNCH_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/agent/rank_process.h"

namespace nmsparse::agent {

// What a rank runs on: a GPU (its CUDA device number on this node) or a CPU slot.
struct RankDevice {
  int gpu = -1;  // -1: CPU slot.
};

struct RunLaunch {
  int64_t run_id = 0;
  uint32_t attempt = 0;
  std::string spec_yaml;  // Written to <run_dir>/spec.yaml.
  std::string run_dir;    // Spec and checkpoints; the same directory for every attempt of the run.
  std::string init_from;  // A fork: its parent's run directory (empty otherwise).
  std::string trainer;    // The nmtrain binary.
  std::vector<std::string> trainer_args;  // Extra arguments (e.g. --threads N).
  std::vector<RankDevice> ranks;          // One per rank; rank 0 first.
  std::string master_addr = "127.0.0.1";
  // A multi-node run: this node's place in its gang and the port node 0's rank 0 listens on (0: a single
  // node, which picks a free loopback port itself).
  uint32_t nodes = 1;
  uint32_t node_rank = 0;
  int master_port = 0;
  std::string socket_ifname;  // GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME of the ranks when set.
  std::chrono::milliseconds kill_grace{5000};  // SIGTERM -> SIGKILL.
};

// True when the run's ranks are on GPUs. A run is all GPU or all CPU; CheckRankDevices says why not.
bool OnGpus(const RunLaunch& launch);
absl::Status CheckRankDevices(const RunLaunch& launch);

// The global rank of local rank `local`: node_rank x ranks per node + local.
size_t GlobalRank(const RunLaunch& launch, size_t local);

// Local rank `rank`'s command: `trainer --spec <spec_path> --out <run_dir> --resume [--init-from <init_from>]
// --device cpu|cuda [args]`, in
// the run directory, with `base_env` plus RANK (GlobalRank), LOCAL_RANK, WORLD_SIZE (nodes x ranks per
// node), MASTER_ADDR, MASTER_PORT, GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME when set,
// CUDA_VISIBLE_DEVICES: the run's GPUs in rank order (so that rank r's cuda:r is its own GPU), or empty on
// CPU slots (no GPU visible at all), and CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA then numbers the GPUs as
// nvidia-smi, where the slots' indices come from, does).
RankCommand MakeRankCommand(const RunLaunch& launch, size_t rank, int master_port,
                            const std::vector<std::string>& base_env, const std::string& spec_path);

// The agent's environment without the variables MakeRankCommand sets, and without the agent's credentials
// (kCredentialVariables: the token, its file and the TLS files), which no trainer needs.
std::vector<std::string> AgentEnvironmentForRanks();

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_RUN_LAUNCH_H_
