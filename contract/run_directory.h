// What nmworker and nmtrain agree on about run directories, <work_dir>/runs/<run id>/: where one is, the
// spec file the agent writes there, the checkpoints nmtrain keeps there. Standard library only, like all of
// contract/.
#ifndef NMSPARSE_CONTRACT_RUN_DIRECTORY_H_
#define NMSPARSE_CONTRACT_RUN_DIRECTORY_H_

#include <cstdint>
#include <string>

namespace nmsparse::contract {

// The directory of run `run_id` under a worker's work directory; nmtrain's --out, and a fork's --init-from
// (contract/trainer_flags.h) for the parent's run id.
inline std::string RunDirectory(const std::string& work_dir, int64_t run_id) {
  return work_dir + "/runs/" + std::to_string(run_id);
}

// The spec the agent writes into the run directory and passes as --spec; nmtrain rewrites it there as it
// trains it (canonical, with command-line overrides such as --precision applied).
constexpr char kSpecFileName[] = "spec.yaml";

// The spec file node `node_rank` of a run over several nodes writes and passes as --spec: node 0's is
// kSpecFileName; the others write their own, since every node shares the run directory and two nodes
// renaming one temporary file into place at once would fail.
inline std::string NodeSpecFileName(uint32_t node_rank) {
  return node_rank == 0 ? std::string(kSpecFileName) : "spec.node" + std::to_string(node_rank) + ".yaml";
}

// The checkpoint nmtrain keeps in its --out directory, and the one before it, which nmtrain falls back to
// when the newer one is damaged (worker/trainer/checkpoint/checkpoint.cc writes and reads both; the agent
// looks for a fork's parent checkpoint among them).
constexpr const char* kCheckpointFiles[] = {"checkpoint.pt", "checkpoint.prev.pt"};

// The SHA-256 of every checkpoint file nmtrain wrote there, one per line, latest first; a checkpoint whose
// digest is not listed is damaged and not used (worker/trainer/checkpoint/checkpoint_digest.h).
constexpr char kCheckpointDigestFile[] = "checkpoint.sha256";

// nmtrain's final metric line (the JSON object of kind "final", contract/metric_line.h), also written here
// when the run ends, so that an export of the run (nmtrain --export) names its top-1s in the model card.
constexpr char kFinalMetricsFile[] = "final.json";

}  // namespace nmsparse::contract

#endif  // NMSPARSE_CONTRACT_RUN_DIRECTORY_H_
