// The device contract from the agent's side: what argv and environment every rank of CPU, 1-GPU and
// multi-GPU runs gets. nmtrain's side of the same rule is device_choice_test.
#include "worker/agent/run_launch.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace nmsparse::agent {
namespace {

RunLaunch Launch(const std::vector<int>& devices) {
  RunLaunch launch;
  launch.run_dir = "/work/runs/5";
  launch.trainer = "/opt/nmtrain";
  launch.trainer_args = {"--threads", "4"};
  for (int gpu : devices) launch.ranks.push_back(RankDevice{gpu});
  return launch;
}

std::map<std::string, std::string> EnvOf(const RankCommand& command) {
  std::map<std::string, std::string> env;
  for (const std::string& entry : command.env) {
    const size_t eq = entry.find('=');
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

TEST(MakeRankCommand, CpuRunsHideEveryGpuAndSayCpu) {
  const RunLaunch launch = Launch({-1});
  const RankCommand command =
      MakeRankCommand(launch, 0, 29500, {"PATH=/bin", "CUDA_HOME=/usr/local/cuda"}, "/work/runs/5/spec.yaml");
  EXPECT_EQ(
      absl::StrJoin(command.argv, " "),
      "/opt/nmtrain --spec /work/runs/5/spec.yaml --out /work/runs/5 --resume --device cpu --threads 4");
  auto env = EnvOf(command);
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(env.at("RANK"), "0");
  EXPECT_EQ(env.at("LOCAL_RANK"), "0");
  EXPECT_EQ(env.at("WORLD_SIZE"), "1");
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");
  EXPECT_EQ(env.at("PATH"), "/bin");  // The agent's own variables pass through.
  EXPECT_EQ(command.cwd, "/work/runs/5");
  EXPECT_FALSE(OnGpus(launch));
}

// Node 1 of a 3-node run of 2 GPUs per node: global ranks 2 and 3 of 6, local ranks 0 and 1, meeting at node
// 0's address; --socket_ifname replaces the agent's own interface variables.
TEST(MakeRankCommand, GangNodesNumberRanksAfterTheNodesBefore) {
  RunLaunch launch = Launch({4, 5});
  launch.nodes = 3;
  launch.node_rank = 1;
  launch.master_addr = "10.0.0.1";
  launch.master_port = 29517;
  launch.socket_ifname = "ib0";
  for (size_t local = 0; local < 2; ++local) {
    auto env = EnvOf(MakeRankCommand(launch, local, launch.master_port, {"GLOO_SOCKET_IFNAME=eth0"},
                                     "/work/runs/5/spec.yaml"));
    EXPECT_EQ(env.at("RANK"), absl::StrCat(2 + local));
    EXPECT_EQ(env.at("LOCAL_RANK"), absl::StrCat(local));
    EXPECT_EQ(env.at("WORLD_SIZE"), "6");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "29517");
    EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "ib0");
    EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "ib0");
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "4,5");
  }
  EXPECT_EQ(GlobalRank(launch, 1), 3u);
}

TEST(MakeRankCommand, AForkNamesItsParentsRunDirectory) {
  RunLaunch launch = Launch({-1});
  launch.init_from = "/work/runs/3";
  EXPECT_EQ(absl::StrJoin(MakeRankCommand(launch, 0, 29500, {}, "/work/runs/5/spec.yaml").argv, " "),
            "/opt/nmtrain --spec /work/runs/5/spec.yaml --out /work/runs/5 --resume --init-from /work/runs/3 "
            "--device cpu --threads 4");
}

// An agent started with another CUDA_DEVICE_ORDER does not pass it on: the ranks get PCI_BUS_ID only.
TEST(AgentEnvironmentForRanks, ReplacesTheDeviceOrder) {
  setenv("CUDA_DEVICE_ORDER", "FASTEST_FIRST", 1);
  const std::vector<std::string> env = AgentEnvironmentForRanks();
  unsetenv("CUDA_DEVICE_ORDER");
  for (const std::string& entry : env) EXPECT_NE(entry.rfind("CUDA_DEVICE_ORDER=", 0), 0u) << entry;
  const auto ranks = EnvOf(MakeRankCommand(Launch({0}), 0, 1234, env, "spec.yaml"));
  EXPECT_EQ(ranks.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
}

// Every rank sees the run's GPUs in rank order and opens cuda:LOCAL_RANK, i.e. its own slot's GPU.
TEST(MakeRankCommand, GpuRunsListTheirGpusInRankOrder) {
  const std::vector<std::vector<int>> runs = {{3}, {0, 2}, {1, 0}, {0, 1, 2, 3, 4, 5, 6, 7}};
  for (const auto& devices : runs) {
    const RunLaunch launch = Launch(devices);
    ASSERT_TRUE(OnGpus(launch));
    ASSERT_TRUE(CheckRankDevices(launch).ok());
    for (size_t r = 0; r < devices.size(); ++r) {
      const RankCommand command = MakeRankCommand(launch, r, 1234, {}, "spec.yaml");
      const auto env = EnvOf(command);
      const std::string listed = absl::StrJoin(devices, ",");
      EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), listed);
      EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");  // nvidia-smi's numbering, not fastest first.
      EXPECT_EQ(env.at("RANK"), absl::StrCat(r));
      EXPECT_EQ(env.at("LOCAL_RANK"), absl::StrCat(r));
      EXPECT_EQ(env.at("WORLD_SIZE"), absl::StrCat(devices.size()));
      // argv: ... --resume --device cuda --threads 4
      ASSERT_GE(command.argv.size(), 8u);
      EXPECT_EQ(command.argv[6], "--device");
      EXPECT_EQ(command.argv[7], "cuda");
      // The r-th listed GPU, the one nmtrain opens as cuda:r, is this rank's slot.
      std::vector<std::string> visible = absl::StrSplit(listed, ',');
      EXPECT_EQ(visible[r], absl::StrCat(devices[r])) << listed << " rank " << r;
    }
  }
}

TEST(CheckRankDevices, RefusesRunsMixingGpusAndCpuSlots) {
  const absl::Status mixed = CheckRankDevices(Launch({0, -1}));
  EXPECT_FALSE(mixed.ok());
  EXPECT_NE(mixed.message().find("rank 1 is on a CPU slot"), std::string::npos) << mixed;
  EXPECT_FALSE(CheckRankDevices(Launch({})).ok());
}

// The worker's credentials stay with the worker: a trainer runs a user's spec and could print its environment
// (or any user could read /proc/PID/environ of a process of theirs).
TEST(AgentEnvironmentForRanks, LeavesOutTheCredentialsAndTheVariablesSetPerRank) {
  setenv("NMSPARSE_TOKEN", "secret-worker-token", 1);
  setenv("NMSPARSE_TOKEN_FILE", "/etc/nmsparse/worker.token", 1);
  setenv("NMSPARSE_TLS_KEY", "/etc/nmsparse/worker.key", 1);
  setenv("NMSPARSE_TOKENISER", "kept", 1);  // Only the exact names are credentials.
  setenv("RANK", "7", 1);
  std::map<std::string, std::string> env;
  for (const std::string& entry : AgentEnvironmentForRanks()) {
    const size_t eq = entry.find('=');
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  EXPECT_EQ(env.count("NMSPARSE_TOKEN"), 0u);
  EXPECT_EQ(env.count("NMSPARSE_TOKEN_FILE"), 0u);
  EXPECT_EQ(env.count("NMSPARSE_TLS_KEY"), 0u);
  EXPECT_EQ(env.count("RANK"), 0u);
  EXPECT_EQ(env["NMSPARSE_TOKENISER"], "kept");
  for (const char* name :
       {"NMSPARSE_TOKEN", "NMSPARSE_TOKEN_FILE", "NMSPARSE_TLS_KEY", "NMSPARSE_TOKENISER", "RANK"})
    unsetenv(name);
}

}  // namespace
}  // namespace nmsparse::agent
