// nmctl commands that read spec files: validate (offline) and submit.
#ifndef NMSPARSE_CLI_SUBMIT_COMMANDS_H_
#define NMSPARSE_CLI_SUBMIT_COMMANDS_H_

#include "cli/command.h"

namespace nmsparse::cli {

int RunValidateCommand(const CommandContext& context);
int RunSubmitCommand(const CommandContext& context);

// --priority N (0 when absent); InvalidArgument naming the text when it is not an integer.
absl::StatusOr<int32_t> PriorityOption(const CommandContext& context);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_SUBMIT_COMMANDS_H_
