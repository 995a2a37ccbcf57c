// nmctl commands that continue a run's training from its checkpoint: resume (the same run, a new attempt) and
// fork (a new run with changed settings). docs/nmctl.md, "Resume and fork".
#ifndef NMSPARSE_CLI_LINEAGE_COMMANDS_H_
#define NMSPARSE_CLI_LINEAGE_COMMANDS_H_

#include <string>

#include "cli/command.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::cli {

int RunResumeCommand(const CommandContext& context);
int RunForkCommand(const CommandContext& context);

// "fork of run 3 (attempt 1, step 40): schedule.epochs=6", or "" for a run that is not a fork.
std::string FormatLineage(const v1::Run& run);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_LINEAGE_COMMANDS_H_
