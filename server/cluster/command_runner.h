// Runs a command (argv, no shell) and collects its exit status and output, with a time limit. The worker
// launchers call their scheduler's commands (sbatch, squeue, scancel) through it.
#ifndef NMSPARSE_SERVER_CLUSTER_COMMAND_RUNNER_H_
#define NMSPARSE_SERVER_CLUSTER_COMMAND_RUNNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace nmsparse::server {

struct CommandResult {
  int exit_code = 0;  // 128 + N when killed by signal N.
  std::string out;    // stdout
  std::string err;    // stderr
};

// NOT_FOUND when the program cannot be started, DEADLINE_EXCEEDED (the command killed) past `timeout`;
// a command that ran and exited non-zero is a result, not an error.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv, absl::Duration timeout);

// "sbatch --x 'a b'": argv as a person would type it, for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_COMMAND_RUNNER_H_
