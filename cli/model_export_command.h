// nmctl export-model RUN -o DIR [--weights final|ema] [--dtype fp32|bf16]: a finished run's deployable model
// in timm's format, fetched through the coordinator from the worker that holds the run's directory
// (docs/interop.md, docs/nmctl.md).
#ifndef NMSPARSE_CLI_MODEL_EXPORT_COMMAND_H_
#define NMSPARSE_CLI_MODEL_EXPORT_COMMAND_H_

#include "cli/command.h"

namespace nmsparse::cli {

int RunExportModelCommand(const CommandContext& context);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_MODEL_EXPORT_COMMAND_H_
