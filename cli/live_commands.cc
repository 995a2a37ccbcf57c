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
#include "cli/table_printer.h"
#include "google/protobuf/util/json_util.h"

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

std::string CompactJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

std::string PointText(const v1::MetricPoint& point) {
  std::vector<std::string> parts = {FormatValues(point.values(), 6)};
  for (const auto& [name, value] : point.labels()) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(parts, " ");
}

// Metric points, log lines and state changes share one sequence per run; a re-opened watch goes on after it.
int64_t EventSeq(const v1::RunEvent& event) {
  if (event.has_metric()) return event.metric().seq();
  if (event.has_log()) return event.log().seq();
  if (event.has_state()) return event.state().seq();
  return -1;
}

int ExitForFinalState(v1::RunState state) { return state == v1::SUCCEEDED ? kExitOk : kExitRunFailed; }

}  // namespace

int RunWatchCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  absl::StatusOr<v1::GetRunResponse> initial = GetRun(context, *id);
  if (!initial.ok()) return Fail(context, initial.status());
  const uint32_t epochs = initial->run().spec().schedule().epochs();
  const bool show_logs = context.args->Has("logs");
  std::ostream& out = *context.out;
  if (!context.json) {
    out << "run " << *id << " " << FormatLabels(initial->run().labels()) << ": "
        << v1::RunState_Name(initial->run().state()) << "\n";
  }

  int64_t next_seq = 0;
  int failures = 0;
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
        out << CompactJson(event) << "\n" << std::flush;
        next_seq = std::max(next_seq, EventSeq(event) + 1);
        continue;
      }
      next_seq = std::max(next_seq, EventSeq(event) + 1);
      if (event.has_metric()) {
        const v1::MetricPoint& p = event.metric();
        if (p.kind() == "step") {
          out << "  step " << p.step() << "  " << PointText(p) << "\n";
        } else {
          // Epoch points carry the 0-based index of the epoch just finished (docs/nmtrain.md).
          const double done = p.kind() == "final" ? epochs : p.epoch() + 1.0;
          out << RenderProgressBar(done, epochs, kBarWidth, "epochs") << "  "
              << (p.kind() == "final" ? "final " : "") << PointText(p) << "\n";
        }
      } else if (event.has_state()) {
        const v1::StateChange& s = event.state();
        out << "state " << (s.from() == v1::RUN_STATE_UNSPECIFIED ? "" : v1::RunState_Name(s.from()) + " -> ")
            << v1::RunState_Name(s.to()) << " (attempt " << s.attempt()
            << (s.reason().empty() ? "" : ", " + s.reason()) << ")\n";
      } else if (event.has_log() && show_logs) {
        out << "  [rank " << event.log().rank() << "] " << event.log().text() << "\n";
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

  absl::StatusOr<v1::GetRunResponse> final_run = GetRun(context, *id);
  if (!final_run.ok()) return Fail(context, final_run.status());
  const v1::Run& run = final_run->run();
  if (!context.json) {
    out << "run " << run.id() << " " << v1::RunState_Name(run.state());
    if (!run.message().empty()) out << ": " << run.message();
    out << "\n";
    if (!run.final_metrics().empty()) out << "  final: " << FormatValues(run.final_metrics()) << "\n";
  }
  if (!IsFinal(run.state())) return Fail(context, absl::InternalError("the watch ended before the run did"));
  return ExitForFinalState(run.state());
}

int RunFollowCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  std::ostream& out = *context.out;
  std::set<int64_t> reported;
  std::string last_summary;
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
    if (response.runs().empty()) {
      // An unknown sweep and a sweep without runs read the same in ListRuns: ask for the sweep.
      v1::GetSweepRequest get;
      get.set_sweep_id(*id);
      absl::StatusOr<v1::Sweep> found = context.connection().Call(&v1::Coordinator::Stub::GetSweep, get);
      if (!found.ok()) return Fail(context, found.status());
    }
    std::map<v1::RunState, int> counts;
    int finished = 0;
    bool all_succeeded = true;
    for (const v1::Run& run : response.runs()) {
      ++counts[run.state()];
      if (!IsFinal(run.state())) continue;
      ++finished;
      all_succeeded = all_succeeded && run.state() == v1::SUCCEEDED;
      if (!context.json && reported.insert(run.id()).second) {
        out << "run " << run.id() << " " << FormatLabels(run.labels()) << ": "
            << v1::RunState_Name(run.state());
        if (!run.final_metrics().empty()) out << "  " << FormatValues(run.final_metrics(), 5);
        if (run.state() != v1::SUCCEEDED && !run.message().empty())
          out << "  (" << run.message().substr(0, 200) << ")";
        out << "\n";
      }
    }
    const int total = response.runs_size();
    std::vector<std::string> parts;
    for (const auto& [state, n] : counts)
      parts.push_back(absl::StrCat(absl::AsciiStrToLower(v1::RunState_Name(state)), " ", n));
    const std::string summary =
        absl::StrCat(RenderProgressBar(finished, total, kBarWidth, "runs"), "  ", absl::StrJoin(parts, ", "));
    if (!context.json && summary != last_summary) {
      out << summary << "\n" << std::flush;
      last_summary = summary;
    }
    if (total > 0 && finished == total) {
      if (context.json) PrintJson(context, response);
      return all_succeeded ? kExitOk : kExitRunFailed;
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
        out << CompactJson(line) << "\n";
      } else {
        out << "[" << line.attempt() << ":" << line.rank() << "] " << line.text() << "\n";
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
      *context.out << "sweep " << *id << ": " << response->cancelled() << " run(s) cancelled\n";
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
  } else {
    *context.out << "run " << *id << ": " << v1::RunState_Name(response->run().state())
                 << (IsFinal(response->run().state()) ? "" : " (its worker is stopping it)") << "\n";
  }
  return kExitOk;
}

}  // namespace nmsparse::cli
