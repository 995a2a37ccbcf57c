#include "worker/agent/run_launch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/client_security.h"
#include "contract/rank_environment.h"
#include "contract/trainer_flags.h"

extern char** environ;

namespace nmsparse::agent {

bool OnGpus(const RunLaunch& launch) { return !launch.ranks.empty() && launch.ranks.front().gpu >= 0; }

absl::Status CheckRankDevices(const RunLaunch& launch) {
  if (launch.ranks.empty()) return absl::InvalidArgumentError("the run has no ranks");
  const bool gpus = OnGpus(launch);
  for (size_t r = 0; r < launch.ranks.size(); ++r) {
    if ((launch.ranks[r].gpu >= 0) != gpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rank 0 is on a ", gpus ? "GPU" : "CPU slot", " but rank ", r, " is on a ",
          gpus ? "CPU slot" : "GPU", ": one run's ranks must all train on GPUs or all on the CPU"));
    }
  }
  return absl::OkStatus();
}

size_t GlobalRank(const RunLaunch& launch, size_t local) {
  return static_cast<size_t>(launch.node_rank) * launch.ranks.size() + local;
}

RankCommand MakeRankCommand(const RunLaunch& launch, size_t rank, int master_port,
                            const std::vector<std::string>& base_env, const std::string& spec_path) {
  const bool gpus = OnGpus(launch);
  RankCommand command;
  command.argv = {launch.trainer,     contract::kSpecFlag, spec_path,
                  contract::kOutFlag, launch.run_dir,      contract::kResumeFlag};
  if (!launch.init_from.empty())
    command.argv.insert(command.argv.end(), {contract::kInitFromFlag, launch.init_from});
  command.argv.insert(command.argv.end(),
                      {contract::kDeviceFlag, gpus ? contract::kDeviceCuda : contract::kDeviceCpu});
  command.argv.insert(command.argv.end(), launch.trainer_args.begin(), launch.trainer_args.end());
  std::vector<int> devices;
  for (const RankDevice& device : launch.ranks) {
    if (device.gpu >= 0) devices.push_back(device.gpu);
  }
  command.env = base_env;
  command.env.push_back(absl::StrCat(contract::kRankVariable, "=", GlobalRank(launch, rank)));
  command.env.push_back(absl::StrCat(contract::kLocalRankVariable, "=", rank));
  command.env.push_back(absl::StrCat(contract::kWorldSizeVariable, "=",
                                     std::max<uint32_t>(launch.nodes, 1) * launch.ranks.size()));
  command.env.push_back(absl::StrCat(contract::kMasterAddrVariable, "=", launch.master_addr));
  command.env.push_back(absl::StrCat(contract::kMasterPortVariable, "=", master_port));
  command.env.push_back(absl::StrCat("CUDA_VISIBLE_DEVICES=", absl::StrJoin(devices, ",")));
  if (!launch.socket_ifname.empty()) {  // Replaces what nmworker's own environment says.
    for (const char* name : contract::kSocketInterfaceVariables) {
      const std::string prefix = absl::StrCat(name, "=");
      command.env.erase(std::remove_if(command.env.begin(), command.env.end(),
                                       [&prefix](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
                        command.env.end());
      command.env.push_back(prefix + launch.socket_ifname);
    }
  }
  // GPU indices come from nvidia-smi, which numbers GPUs by PCI bus; CUDA's default order is fastest first.
  command.env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  command.cwd = launch.run_dir;
  return command;
}

std::vector<std::string> AgentEnvironmentForRanks() {
  static const char* kDevices[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view entry(*e);
    const absl::string_view name = entry.substr(0, entry.find('='));
    bool left_out = false;
    for (const char* replaced : contract::kRankVariables) left_out = left_out || name == replaced;
    for (const char* replaced : kDevices) left_out = left_out || name == replaced;
    for (const char* secret : kCredentialVariables) left_out = left_out || name == secret;
    if (!left_out) env.emplace_back(entry);
  }
  return env;
}

}  // namespace nmsparse::agent
