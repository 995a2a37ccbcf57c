// nmctl cluster: the coordinator's worker pool (the batch jobs it launched through Slurm, and why queued runs
// wait); also the job column of nmctl workers.
#ifndef NMSPARSE_CLI_CLUSTER_COMMANDS_H_
#define NMSPARSE_CLI_CLUSTER_COMMANDS_H_

#include <string>

#include "cli/command.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

int RunClusterCommand(const CommandContext& context);
// "slurm:12 RUNNING on node3, 41m left" for the worker's job, or "" when the pool does not know it.
std::string WorkerJobSummary(const v1::ClusterStatus& cluster, const std::string& job);
// "1h02m", "41m", "35s"; "-" when unknown.
std::string FormatTimeLeft(int64_t seconds);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_CLUSTER_COMMANDS_H_
