// nmctl commands that read the coordinator's state: sweeps, runs, run, best, compare, export, workers.
#ifndef NMSPARSE_CLI_QUERY_COMMANDS_H_
#define NMSPARSE_CLI_QUERY_COMMANDS_H_

#include <cstdint>

#include "cli/command.h"

namespace nmsparse::cli {

// `nmctl runs` shows this many runs when stdout is a terminal and no --limit is given.
inline constexpr uint32_t kRunsShownOnTerminal = 100;

int RunSweepsCommand(const CommandContext& context);
int RunRunsCommand(const CommandContext& context);
int RunRunCommand(const CommandContext& context);
int RunBestCommand(const CommandContext& context);
int RunCompareCommand(const CommandContext& context);
int RunExportCommand(const CommandContext& context);
int RunWorkersCommand(const CommandContext& context);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_QUERY_COMMANDS_H_
