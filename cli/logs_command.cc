#include <optional>
#include <ostream>
#include <thread>

#include "cli/live_commands.h"
#include "cli/live_view.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/rank_tag.h"
#include "cli/run_format.h"
#include "cli/sweep_fetch.h"
#include "common/visible_text.h"

namespace nmsparse::cli {

int RunLogsCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  const bool follow = context.args->Has("follow");
  std::ostream& out = *context.out;
  int64_t next_seq = 0;
  bool run_was_final = false;
  std::optional<RankTag> rank_tag;  // Read from the run's spec once it has lines.
  for (;;) {
    v1::GetLogsRequest request;
    request.set_run_id(*id);
    request.set_from_seq(next_seq);
    absl::StatusOr<v1::GetLogsResponse> fetched =
        context.connection().Call(&v1::Coordinator::Stub::GetLogs, request);
    if (!fetched.ok()) return Fail(context, fetched.status());
    const v1::GetLogsResponse& response = *fetched;
    if (!context.json && !rank_tag.has_value() && !response.lines().empty()) {
      absl::StatusOr<v1::GetRunResponse> run = GetRun(context, *id);
      rank_tag = run.ok() ? RankTag::ForSpec(run->run().resolved_spec()) : RankTag();
    }
    for (const v1::LogLine& line : response.lines()) {
      if (line.seq() < next_seq) continue;
      next_seq = line.seq() + 1;
      if (context.json) {
        out << ToJsonText(ToJson(line), /*pretty=*/false) << "\n";
      } else {
        out << "[" << line.attempt() << ":" << (*rank_tag)(line.rank()) << "] " << VisibleText(line.text())
            << "\n";
      }
    }
    out << std::flush;
    if (!follow || (response.lines().empty() && run_was_final)) return kExitOk;
    if (response.lines().empty()) {
      // Lines may still arrive between this read and the state check: one more read once the run is final.
      absl::StatusOr<v1::GetRunResponse> run = GetRun(context, *id);
      if (!run.ok()) return Fail(context, run.status());
      run_was_final = IsFinal(run->run().state());
      if (!run_was_final) std::this_thread::sleep_for(kPollInterval);
    }
  }
}
}  // namespace nmsparse::cli
