// The environment nmworker gives each rank of a run and nmtrain reads (torchrun's names, so that nmtrain
// also runs under torchrun): which rank this is and where rank 0 waits for the others.
#ifndef NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_
#define NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_

namespace nmsparse::contract {

constexpr char kRankVariable[] = "RANK";
constexpr char kLocalRankVariable[] = "LOCAL_RANK";
constexpr char kWorldSizeVariable[] = "WORLD_SIZE";
constexpr char kMasterAddrVariable[] = "MASTER_ADDR";
constexpr char kMasterPortVariable[] = "MASTER_PORT";
constexpr int kDefaultMasterPort = 29500;  // torchrun's, when MASTER_PORT is unset.

// Every variable above: nmworker replaces them in the environment it passes on.
constexpr const char* kRankVariables[] = {kRankVariable, kLocalRankVariable, kWorldSizeVariable,
                                          kMasterAddrVariable, kMasterPortVariable};

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_RANK_ENVIRONMENT_H_
