// `nmctl report SWEEP [-o DIR] [--metric top1]`: the sweep's HTML report with its SVG figures (report/).
#ifndef NMSPARSE_CLI_REPORT_COMMANDS_H_
#define NMSPARSE_CLI_REPORT_COMMANDS_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "cli/command.h"

namespace nmsparse::cli {

int RunReportCommand(const CommandContext& context);

// Creates `dir` (and its parents) and writes each file into it. Errors name the file.
absl::Status WriteFiles(const std::string& dir, const std::map<std::string, std::string>& files);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_REPORT_COMMANDS_H_
