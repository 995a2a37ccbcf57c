// What every nmctl command gets, and the helpers they share for output and errors.
#ifndef NMSPARSE_CLI_COMMAND_H_
#define NMSPARSE_CLI_COMMAND_H_

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/args.h"
#include "cli/coordinator_connection.h"
#include "cli/visible_output.h"
#include "common/proto_json.h"
#include "google/protobuf/message.h"

namespace nmsparse::cli {

struct CommandContext {
  const ParsedArgs* args = nullptr;
  std::string coordinator;       // Resolved address.
  ClientSecurityFlags security;  // --token-file, --tls-ca, --tls-cert, --tls-key.
  bool json = false;             // --json: machine-readable output on stdout.
  bool terminal = false;         // stdout is a terminal: progress bars redraw in place; else plain lines.
  std::ostream* out = nullptr;   // Shown through cli/visible_output.h: no display control passes.
  std::ostream* err = nullptr;
  VisibleOutput* out_filter = nullptr;  // Behind `out`, for WriteControl.

  // nmctl's own cursor movements on a terminal (the live views), which `out` would show as text.
  void WriteControl(std::string_view sequence) const;

  // Opened on first use, so that offline commands (validate, help) never connect.
  CoordinatorConnection& connection() const;

 private:
  mutable std::unique_ptr<CoordinatorConnection> connection_;
};

using CommandFn = std::function<int(const CommandContext&)>;

// The one positional id a command takes ("run id", "sweep id"); usage errors name the command.
absl::StatusOr<int64_t> IdArgument(const CommandContext& context, const std::string& what);

// Prints "nmctl: <message>" on stderr and returns the status's exit code.
int Fail(const CommandContext& context, const absl::Status& status);

// A message as one JSON document on stdout (common/proto_json.h: proto field names in order, enums by name,
// default values included, ids as numbers).
void PrintJson(const CommandContext& context, const google::protobuf::Message& message);
void PrintJson(const CommandContext& context, const Json& json);

}  // namespace nmsparse::cli

#endif  // NMSPARSE_CLI_COMMAND_H_
