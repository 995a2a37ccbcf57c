#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <ostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/live_commands.h"
#include "cli/live_view.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/progress_bar.h"
#include "cli/rank_tag.h"
#include "cli/run_format.h"
#include "cli/run_progress.h"
#include "cli/sweep_fetch.h"
#include "cli/table_printer.h"
#include "common/visible_text.h"
#include "contract/metric_line.h"

namespace nmsparse::cli {
namespace {

bool ConfirmedFinal(const CommandContext& context, int64_t run_id) {
  absl::StatusOr<v1::GetRunResponse> run = GetRun(context, run_id);
  return run.ok() && IsFinal(run->run().state());
}

// Values in OrderMetricNames order: the same order on every line. The point's labels (device, nm_stage,
// semi_structured/...) are the trainer's, not the user's: `nmctl run` shows them; the run's own labels head
// the watch.
std::string PointText(const v1::MetricPoint& point) { return FormatValues(point.values(), 6); }

// "[#####.......] 120/468 steps  45 steps/s  1.5k img/s  ETA 8s" (epochs when the step total is unknown).
std::string StepBar(const RunProgress& progress, int epochs, double epochs_done) {
  const std::optional<int64_t> total = progress.total_steps();
  std::string bar = total.has_value() ? RenderProgressBar(static_cast<double>(progress.steps_done()),
                                                          static_cast<double>(*total), kBarWidth, "steps")
                                      : RenderProgressBar(epochs_done, epochs, kBarWidth, "epochs");
  const std::string text = progress.Text();  // "step N[/T (P%)]  rate  img/s  ETA".
  const size_t rest = text.find("  ");
  if (rest != std::string::npos) absl::StrAppend(&bar, text.substr(rest));
  return bar;
}

// Metric points, log lines and state changes share one sequence per run; a re-opened watch goes on after it.
int64_t EventSeq(const v1::RunEvent& event) {
  if (event.has_metric()) return event.metric().seq();
  if (event.has_log()) return event.log().seq();
  if (event.has_state()) return event.state().seq();
  return -1;
}

int ExitForFinalState(v1::RunState state) { return EndedWell(state) ? kExitOk : kExitRunFailed; }

}  // namespace

int RunWatchCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  absl::StatusOr<v1::GetRunResponse> initial = GetRun(context, *id);
  if (!initial.ok()) return Fail(context, initial.status());
  RunProgress progress = RunProgress::ForSpec(initial->run().resolved_spec());
  const int epochs = progress.epochs();
  const bool show_logs = context.args->Has("logs");
  const RankTag rank_tag = RankTag::ForSpec(initial->run().resolved_spec());
  std::ostream& out = *context.out;
  if (!context.json) {
    out << "run " << *id << " " << FormatLabels(initial->run()) << ": "
        << v1::RunState_Name(initial->run().state()) << "\n";
  }

  int64_t next_seq = 0;
  int failures = 0;
  bool bar_drawn = false;  // A terminal's last line is the step bar, without its newline.
  // A line of its own, after clearing the step bar from the terminal's last line.
  auto print_line = [&](const std::string& line) {
    if (bar_drawn) context.WriteControl(kClearLine);
    bar_drawn = false;
    out << line << "\n";
  };
  double epochs_done = 0;
  for (;;) {
    v1::WatchRunRequest request;
    request.set_run_id(*id);
    request.set_from_seq(next_seq);
    auto rpc = context.connection().Context(/*streaming=*/true);
    std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader =
        context.connection().stub().WatchRun(rpc.get(), request);
    v1::RunEvent event;
    bool ended = false;
    while (!ended && reader->Read(&event)) {
      failures = 0;
      // The agent reports a run's metrics and logs before its end, so a final state is its last event; once
      // the coordinator confirms it, stop reading rather than rely on the stream being closed.
      ended = event.has_state() && IsFinal(event.state().to()) && ConfirmedFinal(context, *id);
      if (context.json) {
        if (event.has_log() && !show_logs) continue;
        out << ToJsonText(ToJson(event), /*pretty=*/false) << "\n" << std::flush;
        next_seq = std::max(next_seq, EventSeq(event) + 1);
        continue;
      }
      next_seq = std::max(next_seq, EventSeq(event) + 1);
      if (event.has_metric()) {
        const v1::MetricPoint& p = event.metric();
        progress.Add(p);
        if (p.kind() == contract::kKindStep || p.kind() == contract::kKindProgress) {
          // A progress point (steps done, whatever log_every_steps says) has no values to show.
          const std::string values = PointText(p);
          if (context.terminal) {
            context.WriteControl(kClearLine);
            out << StepBar(progress, epochs, epochs_done) << (values.empty() ? "" : "  ") << values;
            bar_drawn = true;
          } else {
            print_line(absl::StrCat("  ", progress.Text(), values.empty() ? "" : "  ", values));
          }
        } else {
          // Epoch points carry the 0-based index of the epoch just finished (docs/nmtrain.md).
          epochs_done = p.kind() == contract::kKindFinal ? epochs : p.epoch() + 1.0;
          print_line(absl::StrCat(StepBar(progress, epochs, epochs_done), "  ",
                                  p.kind() == contract::kKindFinal
                                      ? "final "
                                      : absl::StrCat("epoch ", p.epoch() + 1, "/", epochs, " "),
                                  PointText(p)));
        }
      } else if (event.has_state()) {
        const v1::StateChange& st = event.state();
        print_line(absl::StrCat(
            "state ", st.from() == v1::RUN_STATE_UNSPECIFIED ? "" : v1::RunState_Name(st.from()) + " -> ",
            v1::RunState_Name(st.to()), " (attempt ", st.attempt(),
            st.reason().empty() ? "" : ", " + VisibleText(st.reason()), ")"));
      } else if (event.has_log() && show_logs) {
        print_line(absl::StrCat("  [", rank_tag.several_nodes() ? "" : "rank ", rank_tag(event.log().rank()),
                                "] ", VisibleText(event.log().text())));
      }
      out << std::flush;
    }
    if (ended) {
      rpc->TryCancel();
      reader->Finish();
      break;
    }
    absl::Status status = context.connection().Check(reader->Finish());
    if (status.ok()) break;
    if (status.code() != absl::StatusCode::kUnavailable || ++failures > kReconnectAttempts) {
      return Fail(context, status);
    }
    std::this_thread::sleep_for(
        kPollInterval);  // The coordinator may be restarting: watch again from next_seq.
  }

  if (bar_drawn) out << "\n";
  absl::StatusOr<v1::GetRunResponse> final_run = GetRun(context, *id);
  if (!final_run.ok()) return Fail(context, final_run.status());
  const v1::Run& run = final_run->run();
  if (!context.json) {
    out << "run " << run.id() << " " << v1::RunState_Name(run.state());
    if (!run.message().empty()) out << ": " << VisibleText(run.message());
    out << "\n";
    if (!run.final_metrics().empty()) out << "  final: " << FormatValues(run.final_metrics()) << "\n";
  }
  if (!IsFinal(run.state())) return Fail(context, absl::InternalError("the watch ended before the run did"));
  return ExitForFinalState(run.state());
}
}  // namespace nmsparse::cli
