// nmctl's command line: a command, its positional arguments, and options (--name value, --name=value, or the
// short forms -k, -o, -f). Which options a command takes is in the command table (cli/commands.cc).
#ifndef NMSPARSE_CLI_ARGS_H_
#define NMSPARSE_CLI_ARGS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse::cli {

struct OptionSpec {
  std::string name;  // Long name without dashes, e.g. "idempotency-key".
  bool takes_value = false;
  char short_name = 0;          // e.g. 'k' for -k; 0: none.
  bool repeated = false;        // May be given more than once (--set).
  std::string value_name = "";  // For help: "N", "FILE", "key=value".
  std::string help = "";        // For help: one line.
};

struct ParsedArgs {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> options;  // Boolean options hold "true".

  bool Has(const std::string& name) const { return options.count(name) > 0; }
  // The option's (last) value, or nullopt.
  std::optional<std::string> Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
};

// Parses argv[1..] (without the program name) against the options that the command allows. The first
// non-option word is the command. "--" ends options. Errors name the offending word.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<OptionSpec>& options);

// Parses a non-negative integer id or count, naming `what` in the error.
absl::StatusOr<int64_t> ParseId(const std::string& text, const std::string& what);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_ARGS_H_
