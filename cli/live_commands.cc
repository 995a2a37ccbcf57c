#include "cli/live_commands.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/exit_codes.h"
#include "cli/progress_bar.h"
#include "cli/run_format.h"
#include "cli/run_progress.h"
#include "cli/table_printer.h"
#include "common/visible_text.h"
#include "contract/metric_line.h"

namespace nmsparse::cli {
namespace {

constexpr int kBarWidth = 24;
constexpr auto kPollInterval = std::chrono::milliseconds(1000);
constexpr int kReconnectAttempts = 60;  // About a minute of a coordinator restart.

absl::StatusOr<v1::GetRunResponse> GetRun(const CommandContext& context, int64_t run_id) {
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  absl::StatusOr<v1::GetRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::GetRun, request);
  if (!response.ok()) return response.status();
  return response;
}

bool ConfirmedFinal(const CommandContext& context, int64_t run_id) {
  absl::StatusOr<v1::GetRunResponse> run = GetRun(context, run_id);
  return run.ok() && IsFinal(run->run().state());
}

// Values in OrderMetricNames order, then labels by name: the same order on every line (a protobuf map has
// none of its own).
std::string PointText(const v1::MetricPoint& point) {
  std::vector<std::string> parts = {FormatValues(point.values(), 6)};
  const std::map<std::string, std::string> labels(point.labels().begin(), point.labels().end());
  for (const auto& [name, value] : labels) {
    parts.push_back(absl::StrCat(VisibleText(name), "=", VisibleText(value, kMaxCellChars)));
  }
  return absl::StrJoin(parts, " ");
}

// On a terminal the step bar is redrawn in place on one line; every other line first clears it. (Written with
// CommandContext::WriteControl: `out` shows every control character as text.)
constexpr char kClearLine[] = "\r\x1b[2K";
constexpr char kLineUp[] = "\x1b[1A";

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

// A run stopped early by its sweep's policy ended as the sweep asked: not a failure.
bool EndedWell(v1::RunState state) { return state == v1::SUCCEEDED || state == v1::STOPPED_EARLY; }

int ExitForFinalState(v1::RunState state) { return EndedWell(state) ? kExitOk : kExitRunFailed; }

}  // namespace

int RunWatchCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  absl::StatusOr<v1::GetRunResponse> initial = GetRun(context, *id);
  if (!initial.ok()) return Fail(context, initial.status());
  const uint32_t epochs = initial->run().spec().schedule().epochs();
  RunProgress progress = RunProgress::ForSpec(initial->run().spec());
  const bool show_logs = context.args->Has("logs");
  std::ostream& out = *context.out;
  if (!context.json) {
    out << "run " << *id << " " << FormatLabels(initial->run().labels()) << ": "
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
        if (p.kind() == contract::kKindStep) {
          if (context.terminal) {
            context.WriteControl(kClearLine);
            out << StepBar(progress, epochs, epochs_done) << "  " << PointText(p);
            bar_drawn = true;
          } else {
            print_line(absl::StrCat("  ", progress.Text(), "  ", PointText(p)));
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
        print_line(absl::StrCat("  [rank ", event.log().rank(), "] ", VisibleText(event.log().text())));
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

namespace {

// What `follow` knows of a sweep's runs between polls: each run's step progress, read from its metric points
// while it runs.
struct SweepProgress {
  std::map<int64_t, RunProgress> runs;  // By run id, once seen.

  // ListRuns leaves specs out: a run's spec (for its step total) is read once, when the run is first seen.
  RunProgress& For(const CommandContext& context, const v1::Run& run) {
    auto it = runs.find(run.id());
    if (it != runs.end()) return it->second;
    absl::StatusOr<v1::GetRunResponse> full = GetRun(context, run.id());
    const v1::ExperimentSpec spec = full.ok() ? full->run().spec() : run.spec();
    return runs.emplace(run.id(), RunProgress::ForSpec(spec)).first->second;
  }

  // Seconds until every unfinished run is done: their remaining steps over the running runs' summed step
  // rate (queued runs count their whole schedule). Nullopt while a total or every rate is unknown.
  std::optional<double> EtaSeconds(const CommandContext& context, const v1::ListRunsResponse& listed) {
    // Each unseen run costs one GetRun for its spec: past this many, a sweep gets no ETA rather than a burst
    // of calls.
    constexpr int kMaxSpecsRead = 512;
    if (listed.runs_size() > kMaxSpecsRead) return std::nullopt;
    double remaining = 0, rate = 0;
    for (const v1::Run& run : listed.runs()) {
      if (IsFinal(run.state())) continue;
      RunProgress& p = For(context, run);
      const std::optional<int64_t> total = p.total_steps();
      if (!total.has_value()) return std::nullopt;
      remaining += static_cast<double>(std::max<int64_t>(*total - p.steps_done(), 0));
      if (run.state() == v1::RUNNING) rate += p.steps_per_s().value_or(0.0);
    }
    if (remaining == 0) return 0.0;
    if (rate <= 0) return std::nullopt;
    return remaining / rate;
  }
};

// Feeds a running run's metric points to its progress.
void ReadRunPoints(const CommandContext& context, const v1::Run& run, RunProgress* progress) {
  v1::GetRunRequest request;
  request.set_run_id(run.id());
  request.set_include_metrics(true);
  absl::StatusOr<v1::GetRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::GetRun, request);
  if (!response.ok()) return;  // The next poll tries again; follow itself reports unreachability.
  for (const v1::MetricPoint& p : response->metrics()) progress->Add(p);
}

absl::StatusOr<v1::Sweep> GetSweep(const CommandContext& context, int64_t sweep_id) {
  v1::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  return context.connection().Call(&v1::Coordinator::Stub::GetSweep, request);
}

// Whether a sweep whose `total` runs have all ended gets more: a search sweep does while its search goes on
// (fewer runs than its budget, not cancelled, not ended early).
bool MoreRunsComing(const v1::Sweep& sweep, int total) {
  const v1::Search& search = sweep.spec().search();
  if (search.algorithm().empty()) return total == 0;
  return !sweep.cancelled() && sweep.search_ended().empty() && static_cast<uint32_t>(total) < search.budget();
}

std::string RunLine(const v1::Run& run) {
  std::string line =
      absl::StrCat("run ", run.id(), " ", FormatLabels(run.labels()), ": ", v1::RunState_Name(run.state()));
  if (!run.final_metrics().empty()) absl::StrAppend(&line, "  ", FormatValues(run.final_metrics(), 5));
  if (run.state() != v1::SUCCEEDED && !run.message().empty())
    absl::StrAppend(&line, "  (", VisibleText(run.message(), 200), ")");
  return line;
}

}  // namespace

int RunFollowCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  std::ostream& out = *context.out;
  std::set<int64_t> reported;
  std::map<int64_t, int64_t> progress_printed;  // Plain output: the permille last printed per run.
  std::string last_summary;
  SweepProgress sweep_progress;
  int drawn_lines = 0;  // Terminal: lines of the live block to redraw.
  int failures = 0;
  for (;;) {
    v1::ListRunsRequest request;
    request.set_sweep_id(*id);
    absl::StatusOr<v1::ListRunsResponse> listed =
        context.connection().Call(&v1::Coordinator::Stub::ListRuns, request);
    if (!listed.ok()) {
      if (listed.status().code() != absl::StatusCode::kUnavailable || ++failures > kReconnectAttempts) {
        return Fail(context, listed.status());
      }
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    failures = 0;
    const v1::ListRunsResponse& response = *listed;
    std::map<v1::RunState, int> counts;
    int finished = 0;
    bool all_succeeded = true;
    std::vector<std::string> finished_lines, running_lines;
    for (const v1::Run& run : response.runs()) {
      ++counts[run.state()];
      if (run.state() == v1::RUNNING && !context.json) {
        RunProgress& progress = sweep_progress.For(context, run);
        ReadRunPoints(context, run, &progress);
        const std::string line =
            absl::StrCat("  run ", run.id(), " ", FormatLabels(run.labels()), ": ", progress.Text());
        const std::optional<int64_t> total = progress.total_steps();
        const int64_t permille = total.has_value() && *total > 0 ? progress.steps_done() * 1000 / *total : 0;
        if (context.terminal) {
          running_lines.push_back(line);
        } else if (progress_printed.count(run.id()) == 0 ||
                   progress_printed[run.id()] / 100 != permille / 100) {
          running_lines.push_back(line);  // Plain lines: about every 10% of a run.
          progress_printed[run.id()] = permille;
        }
      }
      if (!IsFinal(run.state())) continue;
      ++finished;
      all_succeeded = all_succeeded && EndedWell(run.state());
      if (!context.json && reported.insert(run.id()).second) finished_lines.push_back(RunLine(run));
    }
    const int total = response.runs_size();
    std::vector<std::string> parts;
    for (const auto& [state, n] : counts)
      parts.push_back(absl::StrCat(absl::AsciiStrToLower(v1::RunState_Name(state)), " ", n));
    std::string summary =
        absl::StrCat(RenderProgressBar(finished, total, kBarWidth, "runs"), "  ", absl::StrJoin(parts, ", "));
    if (!context.json) {
      const std::optional<double> eta = sweep_progress.EtaSeconds(context, response);
      const std::string eta_text = finished == total ? ""
                                   : eta.has_value() ? "  ETA " + FormatSeconds(*eta)
                                                     : "  ETA ?";
      if (context.terminal) {
        // Redraw the live block (summary and running runs) below the lines printed for good.
        for (int i = 0; i < drawn_lines; ++i) context.WriteControl(absl::StrCat(kLineUp, kClearLine));
        for (const std::string& line : finished_lines) out << line << "\n";
        out << summary << eta_text << "\n";
        for (const std::string& line : running_lines) out << line << "\n";
        drawn_lines = 1 + static_cast<int>(running_lines.size());
      } else {
        for (const std::string& line : finished_lines) out << line << "\n";
        if (summary != last_summary) out << summary << eta_text << "\n";
        for (const std::string& line : running_lines) out << line << "\n";
      }
      out << std::flush;
      last_summary = summary;
    }
    if (finished == total) {
      // Also tells an unknown sweep from one without runs, which read the same in ListRuns.
      absl::StatusOr<v1::Sweep> sweep = GetSweep(context, *id);
      if (!sweep.ok()) return Fail(context, sweep.status());
      if (!MoreRunsComing(*sweep, total)) {
        if (context.json) PrintJson(context, response);
        if (sweep->search_ended().empty()) return all_succeeded ? kExitOk : kExitRunFailed;
        *(context.json ? context.err : context.out)
            << "search ended early after " << total << " of " << sweep->spec().search().budget()
            << " runs: " << sweep->search_ended() << "\n";
        return kExitRunFailed;
      }
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

int RunLogsCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  const bool follow = context.args->Has("follow");
  std::ostream& out = *context.out;
  int64_t next_seq = 0;
  bool run_was_final = false;
  for (;;) {
    v1::GetLogsRequest request;
    request.set_run_id(*id);
    request.set_from_seq(next_seq);
    absl::StatusOr<v1::GetLogsResponse> fetched =
        context.connection().Call(&v1::Coordinator::Stub::GetLogs, request);
    if (!fetched.ok()) return Fail(context, fetched.status());
    const v1::GetLogsResponse& response = *fetched;
    for (const v1::LogLine& line : response.lines()) {
      if (line.seq() < next_seq) continue;
      next_seq = line.seq() + 1;
      if (context.json) {
        out << ToJsonText(ToJson(line), /*pretty=*/false) << "\n";
      } else {
        out << "[" << line.attempt() << ":" << line.rank() << "] " << VisibleText(line.text()) << "\n";
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
