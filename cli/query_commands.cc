#include "cli/query_commands.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/cluster_commands.h"
#include "cli/compare_table.h"
#include "cli/lineage_commands.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/pooling_check.h"
#include "cli/report_commands.h"
#include "cli/run_format.h"
#include "cli/sweep_fetch.h"
#include "cli/table_printer.h"
#include "common/metric_text.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "contract/metric_line.h"
#include "contract/metric_names.h"
#include "report/best_epoch.h"
#include "report/compare_pivot.h"
#include "report/paper_table.h"
#include "report/tfevents.h"
#include "schemas/metric_objective.h"

namespace nmsparse::cli {
namespace {

// Characters a sweep's name or submitter shows in `nmctl sweeps` (names may be 256 bytes; --json has them
// whole).
constexpr size_t kMaxNameColumnWidth = 60;

std::string Count(const v1::Sweep& sweep, const std::string& state) {
  auto it = sweep.run_counts().find(state);
  return absl::StrCat(it == sweep.run_counts().end() ? 0 : it->second);
}

std::string StateText(const v1::Run& run) {
  std::string text = v1::RunState_Name(run.state());
  if (run.queue_position() > 0) absl::StrAppend(&text, " #", run.queue_position());
  if (run.reused_from() > 0) absl::StrAppend(&text, " (reused ", run.reused_from(), ")");
  // "(fork of 13: schedule.epochs=30)": what the fork changed tells two forks of one run apart.
  if (run.lineage().parent_run_id() > 0) {
    absl::StrAppend(&text, " (fork of ", run.lineage().parent_run_id());
    if (run.lineage().overrides_size() > 0) {
      absl::StrAppend(&text, ": ", VisibleText(absl::StrJoin(run.lineage().overrides(), " "), 60));
    }
    absl::StrAppend(&text, ")");
  }
  return text;
}

// "attempt 2 (max_retries 1)": resumes and hand-backs start attempts too, so the attempt may pass
// max_retries + 1 ("attempt 2 of up to 1" was wrong); "never trained" for attempt 0 (queued, or reused).
std::string AttemptText(const v1::Run& run) {
  if (run.attempt() == 0) return run.reused_from() > 0 ? "never trained (reused)" : "no attempt yet";
  return absl::StrCat("attempt ", run.attempt(), " (max_retries ", run.max_retries(), ")");
}

// A multi-node run's nodes (of its current or last attempt), one line each: "node 1: worker 4, ranks 2-3".
std::string GangText(const v1::Run& run) {
  if (run.gang().members_size() < 2) {
    return run.nodes() > 1 ? absl::StrCat("  nodes:    ", run.nodes(), " (not placed yet)\n") : "";
  }
  std::string text = absl::StrCat("  nodes:    ", run.gang().members_size(), ", meeting at ",
                                  VisibleText(run.gang().master_addr()), ":", run.gang().master_port(), "\n");
  for (const v1::GangMember& m : run.gang().members()) {
    const uint32_t g = static_cast<uint32_t>(m.slots_size()), first = m.node_rank() * g;
    absl::StrAppend(&text, "    node ", m.node_rank(), ": worker ", m.worker_id(), ", slots ",
                    absl::StrJoin(m.slots(), ","), ", ranks ", first,
                    g > 1 ? absl::StrCat("-", first + g - 1) : "", "\n");
  }
  return text;
}

// Why a run ended other than SUCCEEDED (its message, cut to a table cell), or why a multi-node run waits;
// empty otherwise.
std::string WhyText(const v1::Run& run) {
  if (run.state() == v1::QUEUED && !run.waiting().empty()) return run.waiting();
  if (run.state() == v1::SUCCEEDED || !IsFinal(run.state())) return "";
  constexpr size_t kMax = 100;
  return run.message().size() <= kMax ? run.message() : run.message().substr(0, kMax - 3) + "...";
}

struct RunsPage {
  uint32_t limit = 0;  // 0: all.
  uint32_t offset = 0;
};

// --limit and --offset; without --limit, a terminal gets kRunsShownOnTerminal runs (a pipe gets them all).
absl::StatusOr<RunsPage> RunsPageOption(const CommandContext& context) {
  RunsPage page;
  page.limit = context.terminal && !context.json ? kRunsShownOnTerminal : 0;
  for (auto [name, value] : {std::pair{"limit", &page.limit}, std::pair{"offset", &page.offset}}) {
    auto text = context.args->Get(name);
    if (!text) continue;
    if (!absl::SimpleAtoi(*text, value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": '", *text, "' is not a count (a whole number from 0)"));
    }
  }
  return page;
}

}  // namespace

int RunSweepsCommand(const CommandContext& context) {
  if (!context.args->positional.empty())
    return Fail(context, absl::InvalidArgumentError("'sweeps' takes no argument"));
  absl::StatusOr<v1::ListSweepsResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::ListSweeps, v1::ListSweepsRequest());
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  Table table({"ID", "NAME", "BY", "RUNS", "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "STOPPED",
               "CREATED"});
  table.SetMaxWidth(1, kMaxNameColumnWidth);  // A long name does not widen every row.
  table.SetMaxWidth(2, kMaxNameColumnWidth);
  for (const v1::Sweep& sweep : response->sweeps()) {
    uint32_t total = 0;
    for (const auto& [state, n] : sweep.run_counts()) total += n;
    const uint32_t running = std::stoul(Count(sweep, "RUNNING")) + std::stoul(Count(sweep, "ASSIGNED"));
    table.AddRow({absl::StrCat(sweep.id()), sweep.name() + (sweep.cancelled() ? " (cancelled)" : ""),
                  Submitter(sweep.submitted_by()), absl::StrCat(total), Count(sweep, "QUEUED"),
                  absl::StrCat(running), Count(sweep, "SUCCEEDED"), Count(sweep, "FAILED"),
                  Count(sweep, "CANCELLED"), Count(sweep, "STOPPED_EARLY"),
                  FormatTime(sweep.created_at_ms())});
  }
  *context.out << table.Render();
  // Searches that ended before their budget, and why (a table of their own: the reason is long).
  Table ended({"SWEEP", "SEARCH ENDED EARLY"});
  for (const v1::Sweep& sweep : response->sweeps()) {
    if (!sweep.search_ended().empty()) ended.AddRow({absl::StrCat(sweep.id()), sweep.search_ended()});
  }
  if (ended.rows() > 0) *context.out << "\n" << ended.Render();
  return kExitOk;
}

int RunRunsCommand(const CommandContext& context) {
  if (!context.args->positional.empty()) {
    return Fail(context, absl::InvalidArgumentError("'runs' takes no argument (use --sweep S, --state X)"));
  }
  int64_t sweep_id = 0;
  if (auto sweep = context.args->Get("sweep")) {
    absl::StatusOr<int64_t> id = ParseId(*sweep, "--sweep");
    if (!id.ok()) return Fail(context, id.status());
    sweep_id = *id;
  }
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  if (auto name = context.args->Get("state")) {
    absl::StatusOr<v1::RunState> parsed = ParseRunState(*name);
    if (!parsed.ok()) return Fail(context, parsed.status());
    state = *parsed;
  }
  absl::StatusOr<RunsPage> page = RunsPageOption(context);
  if (!page.ok()) return Fail(context, page.status());
  absl::StatusOr<std::vector<v1::Run>> runs = ListRuns(context, sweep_id, state, page->limit, page->offset);
  if (!runs.ok()) return Fail(context, runs.status());
  if (context.json) {
    v1::ListRunsResponse response;
    for (v1::Run& run : *runs) *response.add_runs() = std::move(run);
    PrintJson(context, response);
    return kExitOk;
  }
  Table table({"ID", "SWEEP", "BY", "#", "STATE", "TRY", "LABELS", "WORKER", "HASH", "TIME", "FINAL", "WHY"});
  const int64_t now = absl::ToUnixMillis(absl::Now());
  for (const v1::Run& run : *runs) {
    table.AddRow({absl::StrCat(run.id()), absl::StrCat(run.sweep_id()), Submitter(run.submitted_by()),
                  absl::StrCat(run.index()), StateText(run), absl::StrCat(run.attempt()), FormatLabels(run),
                  run.worker_id() > 0 ? absl::StrCat(run.worker_id()) : "-", run.content_hash().substr(0, 10),
                  FormatDuration(run.started_at_ms(), run.finished_at_ms() > 0 ? run.finished_at_ms() : now),
                  FormatValues(run.final_metrics(), 3), WhyText(run)});
  }
  *context.out << table.Render();
  if (page->limit != 0 && runs->size() == page->limit) {
    *context.err << "nmctl: " << runs->size() << " runs shown from offset " << page->offset << "; --offset "
                 << page->offset + page->limit << " for the next, --limit 0 for all\n";
  }
  return kExitOk;
}

int RunRunCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "run id");
  if (!id.ok()) return Fail(context, id.status());
  v1::GetRunRequest request;
  request.set_run_id(*id);
  request.set_include_metrics(true);
  absl::StatusOr<v1::GetRunResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::GetRun, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  const v1::Run& run = response->run();
  std::ostream& out = *context.out;
  out << "run " << run.id() << " (sweep " << run.sweep_id() << ", index " << run.index() << ")\n"
      << "  state:    " << StateText(run) << ", " << AttemptText(run) << "\n"
      << "  by:       " << Submitter(run.submitted_by()) << "\n"
      << "  labels:   " << FormatLabels(run) << "\n"
      << (run.lineage().parent_run_id() > 0 ? "  lineage:  " + FormatLineage(run) + "\n" : "")
      << "  hash:     " << run.content_hash() << "\n"
      << "  worker:   " << (run.worker_id() > 0 ? absl::StrCat(run.worker_id()) : "-");
  if (run.slots_size() > 0) out << " slots " << absl::StrJoin(run.slots(), ",");
  out << "\n"
      << GangText(run) << "  created:  " << FormatTime(run.created_at_ms())
      << "  started: " << FormatTime(run.started_at_ms())
      << "  finished: " << FormatTime(run.finished_at_ms()) << "\n";
  if (!run.message().empty()) out << "  message:  " << VisibleText(run.message()) << "\n";
  out << ModelLocationText(run);
  if (!run.final_metrics().empty()) {
    out << "  final:    " << FormatValues(run.final_metrics()) << "\n";
    if (const std::string cost = CostSummary(run.final_metrics()); !cost.empty())
      out << "  cost:     " << cost << "\n";
  }
  // The trainer's latest epoch or final line names every rank's device (cpu, or cuda:K and the GPU model).
  for (auto point = response->metrics().rbegin(); point != response->metrics().rend(); ++point) {
    const auto devices = point->labels().find(contract::kDevicesLabel);
    if (devices == point->labels().end()) continue;
    out << "  devices:  " << VisibleText(devices->second) << " (attempt " << point->attempt() << ")\n";
    break;
  }
  // The semi-structured 2:4 linears' latest decisions (docs/accelerated-2-4.md).
  for (auto point = response->metrics().rbegin(); point != response->metrics().rend(); ++point) {
    const auto decisions = SemiStructuredDecisions(*point);
    if (decisions.empty()) continue;
    out << "  2:4 layers (epoch " << point->epoch() << ", attempt " << point->attempt() << "):\n";
    for (const auto& [layer, decision] : decisions) {
      out << "    " << VisibleText(layer) << ": " << VisibleText(decision) << "\n";
    }
    break;
  }
  // Progress points carry only a step count: watch and follow show them, the tables have no use for them.
  std::vector<v1::MetricPoint> points;
  for (const v1::MetricPoint& p : response->metrics()) {
    if (p.kind() != contract::kKindProgress) points.push_back(p);
  }
  // The paper's diagnostics per epoch (docs/sparsity-method.md §11).
  if (const Table diagnostics = SparsityDiagnosticsTable(points); diagnostics.rows() > 0)
    out << "  sparse layers per epoch:\n" << diagnostics.Render();
  out << "\nspec:\n" << run.resolved_spec();
  if (!run.resolved_spec().empty() && run.resolved_spec().back() != '\n') out << "\n";
  Table history({"AT", "FROM", "TO", "TRY", "REASON"});
  for (const v1::StateChange& change : response->history()) {
    // A run's first change has no state before it: it was created.
    history.AddRow({FormatTime(change.at_ms()),
                    change.from() == v1::RUN_STATE_UNSPECIFIED ? "-" : v1::RunState_Name(change.from()),
                    v1::RunState_Name(change.to()), absl::StrCat(change.attempt()), change.reason()});
  }
  out << "\nstate history:\n" << history.Render();
  out << "\nmetrics (" << points.size() << " points):\n";
  if (!points.empty()) out << MetricCurveTable(points).Render();
  return kExitOk;
}

namespace {

// Refused before dialing, in nmctl's words: both directions, or none for a metric that declares none.
absl::Status CheckBestDirection(const v1::GetBestRequest& request) {
  if (request.minimize() && request.maximize()) {
    return absl::InvalidArgumentError("--minimize and --maximize: give one of them, not both");
  }
  return ObjectiveMaximizes(request.metric(),
                            request.minimize()   ? "min"
                            : request.maximize() ? "max"
                                                 : "",
                            "--metric", "pass --maximize or --minimize")
      .status();
}

}  // namespace

int RunBestCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  v1::GetBestRequest request;
  request.set_sweep_id(*id);
  request.set_metric(context.args->Get("metric").value_or(contract::kTop1));
  if (auto k = context.args->Get("k")) {
    absl::StatusOr<int64_t> parsed = ParseId(*k, "-k");
    if (!parsed.ok()) return Fail(context, parsed.status());
    request.set_k(static_cast<uint32_t>(*parsed));
  }
  request.set_minimize(context.args->Has("minimize"));
  request.set_maximize(context.args->Has("maximize"));
  if (absl::Status st = CheckBestDirection(request); !st.ok()) return Fail(context, st);
  absl::StatusOr<v1::GetBestResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::GetBest, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  // The runs' counterparts of the metric (the EMA's, the deployable model's) beside it.
  const std::vector<v1::Run> runs(response->runs().begin(), response->runs().end());
  const std::vector<report::Counterpart> counterparts = report::Counterparts(runs, request.metric());
  std::vector<std::string> headers = {"RANK", "RUN", "LABELS", request.metric()};
  for (const report::Counterpart& c : counterparts) headers.push_back(c.metric);
  headers.push_back("HASH");
  Table table(headers);
  const auto value_text = [](const v1::Run& run, const std::string& metric) {
    auto value = run.final_metrics().find(metric);
    return value == run.final_metrics().end() ? std::string("-") : FormatMetric(value->second);
  };
  int rank = 0;
  for (const v1::Run& run : runs) {
    std::vector<std::string> row = {absl::StrCat(++rank), absl::StrCat(run.id()), FormatLabels(run),
                                    value_text(run, request.metric())};
    for (const report::Counterpart& c : counterparts) row.push_back(value_text(run, c.metric));
    row.push_back(run.content_hash().substr(0, 10));
    table.AddRow(row);
  }
  *context.out << table.Render();
  if (const std::string legend = report::DeployableLegend(request.metric(), counterparts); !legend.empty()) {
    *context.out << "ranked by " << VisibleText(request.metric()) << "; " << legend;
    if (request.metric() != contract::kDeployTop1)
      *context.out << " (rank by it: --metric " << contract::kDeployTop1 << ")";
    *context.out << "\n";
  }
  if (response->runs().empty())
    *context.out << "(no succeeded run of sweep " << *id << " has " << VisibleText(request.metric()) << ")\n";
  return kExitOk;
}

namespace {

// A metric that no succeeded run reports is a typo (`--metric acc`), not a table of empty cells: the error
// names the metrics the runs do report. Nothing is checked while no run has succeeded yet.
absl::Status CheckMetricReported(const std::vector<v1::Run>& runs, const std::string& metric) {
  std::set<std::string> reported;
  for (const v1::Run& run : runs) {
    if (run.state() != v1::SUCCEEDED) continue;
    for (const auto& [name, value] : run.final_metrics()) reported.insert(name);
  }
  if (reported.empty() || reported.count(metric) > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--metric: no succeeded run reports '", metric,
                                                 "'; they report ", absl::StrJoin(reported, ", ")));
}

}  // namespace

namespace {

struct CompareRuns {
  std::vector<v1::Run> runs;
  bool best = false;  // Each run's metric at its best epoch (--epoch best), not its last.
};

// The sweep's runs as --epoch asks: final (their final metrics) or best (the best epoch point of each).
absl::StatusOr<CompareRuns> RunsForCompare(const CommandContext& context, int64_t sweep_id,
                                           const std::string& metric) {
  const std::string epoch = context.args->Get("epoch").value_or("final");
  if (epoch != "final" && epoch != "best") {
    return absl::InvalidArgumentError(
        absl::StrCat("--epoch: '", VisibleText(epoch), "' is not final or best"));
  }
  if (epoch == "final") {
    NM_ASSIGN_OR_RETURN(std::vector<v1::Run> runs, ListRuns(context, sweep_id, v1::RUN_STATE_UNSPECIFIED));
    return CompareRuns{std::move(runs), false};
  }
  NM_ASSIGN_OR_RETURN(bool maximize, ObjectiveMaximizes(metric, "", "--metric",
                                                        "--epoch best needs a metric with a direction"));
  NM_ASSIGN_OR_RETURN(report::SweepData data, FetchSweepData(context, sweep_id));
  std::vector<std::string> metrics = {metric};
  std::vector<v1::Run> plain;
  for (const report::RunData& r : data.runs) plain.push_back(r.run);
  // The EMA's value at the best epoch beside the model's; the deployable model has only its final value.
  for (const report::Counterpart& c : report::Counterparts(plain, metric)) {
    if (!c.final_only) metrics.push_back(c.metric);
  }
  return CompareRuns{report::AtBestEpoch(data, metrics, maximize), true};
}

// Runs stopped early at a rung have no final value: compare shows where they left off (issue 40), read from
// their curves, fetched only when such a run exists.
absl::StatusOr<report::StoppedValues> StoppedValuesForCompare(const CommandContext& context, int64_t sweep_id,
                                                              const std::vector<v1::Run>& runs,
                                                              const std::string& metric) {
  report::StoppedValues out;
  const bool any = std::any_of(runs.begin(), runs.end(), [&metric](const v1::Run& r) {
    return r.state() == v1::STOPPED_EARLY && r.final_metrics().count(metric) == 0;
  });
  if (!any) return out;
  NM_ASSIGN_OR_RETURN(report::SweepData data, FetchSweepData(context, sweep_id, RunsFetched::kReported));
  return report::StoppedRunValues(data, metric);
}

// "sweep 1 NAME: final top1 (%) by recipe x N:M, pooled over seed".
std::string CompareTitle(const CommandContext& context, const v1::Sweep& sweep,
                         const report::PaperTable& table, const report::ComparePivot& pivot, bool best) {
  std::string title =
      absl::StrCat("sweep ", sweep.id(), " ", VisibleText(sweep.name(), kMaxCellChars), ": ",
                   best ? "best-epoch " : "final ", table.metric, table.percent ? " (%)" : "");
  if (!pivot.row_axis.empty()) absl::StrAppend(&title, " by ", pivot.row_axis);
  if (!pivot.column_axis.empty()) {
    const bool nm = pivot.column_headers != pivot.column_labels;
    absl::StrAppend(&title, " x ", nm ? "N:M" : pivot.column_axis);
  }
  std::vector<std::string> pooled = report::ReplicateGridAxes(sweep.spec());
  for (const std::string& axis : context.args->GetAll("pool")) {
    if (std::find(pooled.begin(), pooled.end(), axis) == pooled.end()) pooled.push_back(axis);
  }
  if (!pooled.empty()) absl::StrAppend(&title, ", pooled over ", absl::StrJoin(pooled, ", "));
  if (!table.reference.empty()) absl::StrAppend(&title, "; \u0394 paired with ", table.reference);
  return title;
}

}  // namespace

int RunCompareCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  absl::StatusOr<TableFormat> format = ParseTableFormat(context.args->Get("format").value_or("text"));
  if (!format.ok()) return Fail(context, format.status());
  absl::StatusOr<v1::Sweep> sweep = GetSweep(context, *id);
  if (!sweep.ok()) return Fail(context, sweep.status());
  if (absl::Status pooling = CheckPooling(context, *sweep); !pooling.ok()) return Fail(context, pooling);
  const auto asked = context.args->Get("metric");
  absl::StatusOr<CompareRuns> runs = RunsForCompare(context, *id, asked.value_or(contract::kTop1));
  if (!runs.ok()) return Fail(context, runs.status());
  // Without --metric, a final table's top-1 is the deployable model's where runs report it (the paper's
  // honest number); at the best epoch, which has no deployable value, it is top1.
  const std::string metric = asked.has_value() || runs->best
                                 ? asked.value_or(contract::kTop1)
                                 : report::PaperTableMetric(runs->runs, contract::kTop1);
  if (absl::Status known = CheckMetricReported(runs->runs, metric); !known.ok()) return Fail(context, known);
  absl::StatusOr<report::StoppedValues> stopped =
      runs->best ? report::StoppedValues() : StoppedValuesForCompare(context, *id, runs->runs, metric);
  if (!stopped.ok()) return Fail(context, stopped.status());
  const report::ComparePivot pivot = report::BuildComparePivot(sweep->spec(), runs->runs, metric, *stopped);
  if (context.json) {
    const Json doc = report::ComparePivotToJson(sweep->id(), pivot);
    PrintJson(context, doc);
    return kExitOk;
  }
  // Runs with model.ema, N:M runs: the EMA's and the deployable model's metric in a column beside each (same
  // runs, so the same cells). At the best epoch the deployable model, measured once at the end, has none.
  std::vector<report::Counterpart> counterparts;
  for (const report::Counterpart& c : report::Counterparts(runs->runs, metric)) {
    if (!runs->best || !c.final_only) counterparts.push_back(c);
  }
  report::PaperTableOptions options;
  options.beside = report::CounterpartPivots(sweep->spec(), runs->runs, counterparts);
  options.delta_row = context.args->Get("delta").value_or("");
  absl::StatusOr<report::PaperTable> table = report::BuildPaperTable(pivot, options);
  if (!table.ok()) return Fail(context, table.status());
  *context.out << RenderPaperTable(*table, CompareTitle(context, *sweep, *table, pivot, runs->best), *format);
  // Which top-1 is which, where the format has room for prose (CSV has none).
  const std::string legend = report::DeployableLegend(metric, counterparts);
  if (!legend.empty() && *format == TableFormat::kLatex) *context.out << "% " << legend << "\n";
  if (!legend.empty() && (*format == TableFormat::kText || *format == TableFormat::kMarkdown)) {
    *context.out << (*format == TableFormat::kMarkdown ? "\n" : "") << legend << "\n";
  }
  return kExitOk;
}

namespace {

// One TensorBoard event file per run under DIR/<run dir>/ (report/tfevents.h); `tensorboard --logdir DIR`
// shows the runs side by side.
int ExportTensorBoard(const CommandContext& context, int64_t sweep_id) {
  std::optional<std::string> dir = context.args->Get("output");
  if (!dir) return Fail(context, absl::InvalidArgumentError("--format tensorboard needs -o DIR"));
  // Runs that never reported a metric point (cancelled while queued, reused results) would be directories of
  // header-only files: 46,119 of 50,000 in a large cancelled sweep.
  absl::StatusOr<report::SweepData> data = FetchSweepData(context, sweep_id, RunsFetched::kReported);
  if (!data.ok()) return Fail(context, data.status());
  for (const report::RunData& run : data->runs) {
    absl::Status written = WriteFiles(absl::StrCat(*dir, "/", report::RunEventDir(run.run)),
                                      {{report::RunEventFileName(run.run), report::RunEventFile(run)}});
    if (!written.ok()) return Fail(context, written);
  }
  *context.err << "wrote TensorBoard events of " << data->runs.size() << " runs of sweep " << sweep_id
               << " to " << *dir << "; runs that never reported a metric point were left out\n";
  return kExitOk;
}

}  // namespace

int RunExportCommand(const CommandContext& context) {
  absl::StatusOr<int64_t> id = IdArgument(context, "sweep id");
  if (!id.ok()) return Fail(context, id.status());
  v1::ExportRequest request;
  request.set_sweep_id(*id);
  const std::string format = absl::AsciiStrToLower(context.args->Get("format").value_or("csv"));
  if (format == "tensorboard") return ExportTensorBoard(context, *id);
  if (format == "csv") {
    request.set_format(v1::ExportRequest::CSV);
  } else if (format == "json") {
    request.set_format(v1::ExportRequest::JSON);
  } else {
    return Fail(context, absl::InvalidArgumentError(
                             absl::StrCat("--format: '", format, "' is not csv, json or tensorboard")));
  }
  request.set_include_curves(context.args->Has("curves"));
  absl::StatusOr<v1::ExportResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::Export, request);
  if (!response.ok()) return Fail(context, response.status());
  if (auto path = context.args->Get("output")) {
    std::ofstream file(*path, std::ios::trunc | std::ios::binary);
    file << response->content();
    if (!file.good()) return Fail(context, absl::PermissionDeniedError(absl::StrCat("cannot write ", *path)));
    *context.err << "wrote " << response->content().size() << " bytes to " << *path << "\n";
    return kExitOk;
  }
  *context.out << response->content();
  return kExitOk;
}

int RunWorkersCommand(const CommandContext& context) {
  if (!context.args->positional.empty())
    return Fail(context, absl::InvalidArgumentError("'workers' takes no argument"));
  absl::StatusOr<v1::ListWorkersResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::ListWorkers, v1::ListWorkersRequest());
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  // The jobs behind the workers; a coordinator without a launcher answers an empty pool.
  absl::StatusOr<v1::ClusterStatus> cluster =
      context.connection().Call(&v1::Coordinator::Stub::GetCluster, v1::GetClusterRequest());
  Table table({"ID", "HOST", "ALIVE", "SLOTS", "FREE", "RUNNING", "LAST HEARTBEAT", "JOB"});
  for (const v1::Worker& worker : response->workers()) {
    std::vector<std::string> slots;
    for (const v1::Slot& slot : worker.slots()) {
      slots.push_back(
          slot.kind() == v1::Slot::GPU
              ? absl::StrCat("gpu:", slot.name(),
                             slot.memory_mb() ? absl::StrCat("/", slot.memory_mb() / 1024, "G") : "")
              : "cpu");
    }
    table.AddRow({absl::StrCat(worker.id()), worker.host(), worker.alive() ? "yes" : "no",
                  absl::StrJoin(slots, ","), absl::StrCat(worker.free_slots()),
                  absl::StrJoin(worker.running_runs(), ","), FormatTime(worker.last_heartbeat_ms()),
                  worker.job().empty() ? "-"
                  : cluster.ok()       ? WorkerJobSummary(*cluster, worker.job())
                                       : worker.job()});
  }
  *context.out << table.Render();
  return kExitOk;
}

}  // namespace nmsparse::cli
