// nmctl cancel: a run, or every unfinished run of a sweep.
#ifndef NMSPARSE_CLI_CANCEL_COMMAND_H_
#define NMSPARSE_CLI_CANCEL_COMMAND_H_

#include "cli/command.h"

namespace nmsparse::cli {

int RunCancelCommand(const CommandContext& context);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_CANCEL_COMMAND_H_
