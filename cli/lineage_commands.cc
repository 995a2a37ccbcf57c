#include "cli/lineage_commands.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/initial_weights_digests.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/submit_commands.h"
#include "cli/table_printer.h"
#include "common/visible_text.h"

namespace nmsparse::cli {

int RunResumeCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  v1::ResumeRunRequest request;
  request.set_run_id(*id);
  absl::StatusOr<v1::ResumeRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::ResumeRun, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  *context.out << "run " << *id << ": " << v1::RunState_Name(response->run().state()) << "; attempt "
               << response->run().attempt() + 1 << " resumes from its last checkpoint\n";
  return kExitOk;
}

int RunForkCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  v1::ForkRunRequest request;
  request.set_run_id(*id);
  std::vector<std::string> sets = context.args->GetAll("set");
  WeightsDigests digests;
  if (absl::Status st = FillForkWeightsDigest(&sets, &digests); !st.ok()) return Fail(context, st);
  for (const std::string& set : sets) request.add_set(set);
  request.set_no_reuse(context.args->Has("no-reuse"));
  absl::StatusOr<int32_t> priority = PriorityOption(context);
  if (!priority.ok()) return Fail(context, priority.status());
  request.set_priority(*priority);
  absl::StatusOr<v1::ForkRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::ForkRun, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  const v1::Run& run = response->run();
  *context.out << "run " << run.id() << " (sweep " << response->sweep().id() << "): " << FormatLineage(run)
               << "; " << v1::RunState_Name(run.state())
               << (run.reused_from() > 0 ? absl::StrCat(" (reused ", run.reused_from(), ")") : "") << "\n";
  return kExitOk;
}

std::string FormatLineage(const v1::Run& run) {
  const v1::RunLineage& lineage = run.lineage();
  if (lineage.parent_run_id() == 0) return "";
  std::string text = absl::StrCat("fork of run ", lineage.parent_run_id(), " (attempt ",
                                  lineage.parent_attempt(), ", step ", lineage.parent_step(), ")");
  if (lineage.overrides_size() > 0) {
    absl::StrAppend(&text, ": ", VisibleText(absl::StrJoin(lineage.overrides(), " "), kMaxCellChars));
  }
  return text;
}

}  // namespace nmsparse::cli
