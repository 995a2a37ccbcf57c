// nmctl commands that follow a run or sweep as it goes: watch, follow, logs (-f).
#ifndef NMSPARSE_CLI_LIVE_COMMANDS_H_
#define NMSPARSE_CLI_LIVE_COMMANDS_H_

#include "cli/command.h"

namespace nmsparse::cli {

int RunWatchCommand(const CommandContext& context);
int RunFollowCommand(const CommandContext& context);
int RunLogsCommand(const CommandContext& context);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_LIVE_COMMANDS_H_
