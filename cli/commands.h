// nmctl's command table: every command with its usage, summary and options, and the help text made from it.
#ifndef NMSPARSE_CLI_COMMANDS_H_
#define NMSPARSE_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"

namespace nmsparse::cli {

struct CommandInfo {
  std::string name;
  std::string usage;    // Arguments after the name, e.g. "SWEEP --metric top1 [-k N]".
  std::string summary;  // One line.
  std::vector<std::string>
      options;  // Names from AllOptions() this command accepts (besides the global ones).
  CommandFn run;
};

const std::vector<CommandInfo>& Commands();
const CommandInfo* FindCommand(const std::string& name);

// Every option of every command; the global ones are --coordinator, --json and --help.
const std::vector<OptionSpec>& AllOptions();

std::string HelpText();
// One command's usage, summary and options (`nmctl submit --help`, `nmctl help submit`).
std::string CommandHelpText(const CommandInfo& command);

// Runs nmctl with `args` (without the program name); returns the exit code. `out_is_terminal`: whether `out`
// is a terminal (progress bars are drawn only there).
int RunNmctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             bool out_is_terminal = false);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COMMANDS_H_
