#include "cli/cancel_command.h"

#include <optional>
#include <string>

#include "cli/nmctl_exit_codes.h"
#include "cli/run_format.h"

namespace nmsparse::cli {

int RunCancelCommand(const CommandContext& context) {
  const std::optional<std::string> sweep = context.args->Get("sweep");
  if (sweep.has_value() == !context.args->positional.empty() || context.args->positional.size() > 1) {
    return Fail(context, absl::InvalidArgumentError("'cancel' takes a run id or --sweep S"));
  }
  if (sweep.has_value()) {
    absl::StatusOr<int64_t> id = ParseId(*sweep, "--sweep");
    if (!id.ok()) return Fail(context, id.status());
    v1::CancelSweepRequest request;
    request.set_sweep_id(*id);
    absl::StatusOr<v1::CancelSweepResponse> response =
        context.connection().Call(&v1::Coordinator::Stub::CancelSweep, request);
    if (!response.ok()) return Fail(context, response.status());
    if (context.json) {
      PrintJson(context, *response);
    } else {
      *context.out << "sweep " << *id << ": " << response->cancelled() << " run(s) cancelled";
      if (response->stopping() > 0) {
        *context.out << " (" << response->stopping() << " running: they end CANCELLED when their worker has "
                     << "stopped them)";
      }
      *context.out << "\n";
    }
    return kExitOk;
  }
  absl::StatusOr<int64_t> id = ParseId(context.args->positional[0], "run id");
  if (!id.ok()) return Fail(context, id.status());
  v1::CancelRunRequest request;
  request.set_run_id(*id);
  absl::StatusOr<v1::CancelRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::CancelRun, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
  } else if (response->already_ended()) {
    // Not an error: the run is over either way (exit 0), and it is left as it ended.
    *context.out << "run " << *id << " had already ended " << v1::RunState_Name(response->run().state())
                 << "; nothing to cancel\n";
  } else {
    *context.out << "run " << *id << ": " << v1::RunState_Name(response->run().state())
                 << (IsFinal(response->run().state()) ? "" : " (its worker is stopping it)") << "\n";
  }
  return kExitOk;
}

}  // namespace nmsparse::cli
