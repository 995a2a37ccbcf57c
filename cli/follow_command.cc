#include <chrono>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/live_commands.h"
#include "cli/live_view.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/progress_bar.h"
#include "cli/run_format.h"
#include "cli/run_progress.h"
#include "cli/sweep_fetch.h"
#include "cli/table_printer.h"
#include "common/visible_text.h"
#include "schemas/more_runs.h"

namespace nmsparse::cli {
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
    const std::string& spec = full.ok() ? full->run().resolved_spec() : run.resolved_spec();
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

std::string RunLine(const v1::Run& run) {
  std::string line =
      absl::StrCat("run ", run.id(), " ", FormatLabels(run), ": ", v1::RunState_Name(run.state()));
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
            absl::StrCat("  run ", run.id(), " ", FormatLabels(run), ": ", progress.Text());
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
}  // namespace nmsparse::cli
