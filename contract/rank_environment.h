// The environment nmworker gives each rank of a run and nmtrain reads (torchrun's names, so that nmtrain
// also runs under torchrun): which rank this is and where rank 0 waits for the others.
#ifndef NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_
#define NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_

#include <string>

namespace nmsparse::contract {

constexpr char kRankVariable[] = "RANK";
constexpr char kLocalRankVariable[] = "LOCAL_RANK";
constexpr char kWorldSizeVariable[] = "WORLD_SIZE";
constexpr char kMasterAddrVariable[] = "MASTER_ADDR";
constexpr char kMasterPortVariable[] = "MASTER_PORT";
constexpr int kDefaultMasterPort = 29500;  // torchrun's, when MASTER_PORT is unset.

// The network interface the collectives use (multi-node runs): nmworker --socket_ifname sets both.
constexpr char kGlooSocketIfnameVariable[] = "GLOO_SOCKET_IFNAME";
constexpr char kNcclSocketIfnameVariable[] = "NCCL_SOCKET_IFNAME";
constexpr const char* kSocketInterfaceVariables[] = {kGlooSocketIfnameVariable, kNcclSocketIfnameVariable};

// A rank's place in a run over several nodes: RANK = node rank x ranks per node + LOCAL_RANK, WORLD_SIZE =
// nodes x ranks per node, MASTER_ADDR = node 0's advertised address (never localhost unless every node is
// a loopback test node), MASTER_PORT = a fresh port of the coordinator's range per attempt.

// A loopback MASTER_ADDR (localhost, 127.x.y.z, ::1): nmtrain's Gloo then binds loopback, and the
// coordinator forms gangs of loopback nodes only with each other (test nodes on one machine).
inline bool IsLoopbackAddress(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

// Every variable above: nmworker replaces them in the environment it passes on.
constexpr const char* kRankVariables[] = {kRankVariable, kLocalRankVariable, kWorldSizeVariable,
                                          kMasterAddrVariable, kMasterPortVariable};

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_
