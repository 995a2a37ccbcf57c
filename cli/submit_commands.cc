#include "cli/submit_commands.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <ostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/deploy_warnings.h"
#include "cli/initial_weights_digests.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/row_summary.h"
#include "cli/run_format.h"
#include "cli/run_preview.h"
#include "cli/spec_file.h"
#include "cli/table_printer.h"
#include "common/unicode_text.h"
#include "common/visible_text.h"
#include "schemas/asha_rungs.h"
#include "schemas/data_pipeline.h"
#include "schemas/dispatch_order.h"
#include "schemas/layer_plan.h"
#include "schemas/limits.h"
#include "schemas/recipe.h"
#include "schemas/structure_decay.h"
#include "schemas/sweep.h"
#include "schemas/sweep_blocks.h"
#include "schemas/sweep_size.h"
#include "schemas/trained_epochs.h"

namespace nmsparse::cli {
namespace {

constexpr size_t kHashPrefix = 12;
constexpr char kMaxRunsFlag[] = "max-runs-per-sweep";
constexpr char kMaxRunsEnv[] = "NMSPARSE_MAX_RUNS_PER_SWEEP";

// nmctl's own limit on the runs of a sweep: the flag, else the environment, else the shared default.
absl::StatusOr<int64_t> MaxRunsPerSweep(const CommandContext& context) {
  if (auto flag = context.args->Get(kMaxRunsFlag)) return ParseId(*flag, absl::StrCat("--", kMaxRunsFlag));
  const char* env = std::getenv(kMaxRunsEnv);
  if (env != nullptr && *env != '\0') return ParseId(env, kMaxRunsEnv);
  return limits::kDefaultMaxRunsPerSweep;
}

// Counted from the spec before anything is expanded or sent: a sweep of millions of runs is refused at once.
absl::Status CheckRunCount(const CommandContext& context, const v1::SweepSpec& spec) {
  absl::StatusOr<int64_t> limit = MaxRunsPerSweep(context);
  if (!limit.ok()) return limit.status();
  absl::Status status =
      CheckSweepRunCount(spec, *limit,
                         absl::StrCat("nmctl --", kMaxRunsFlag, " or ", kMaxRunsEnv,
                                      "; the coordinator has its own, nmserver --max_runs_per_sweep"));
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context.args->positional[0], ": ", status.message()));
}

// "FILE: message", for errors found after the file was read.
absl::Status InFile(const CommandContext& context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(context.args->positional[0], ": ", status.message()));
}

absl::StatusOr<v1::SweepSpec> LoadFromArgs(const CommandContext& context, WeightsDigests* digests) {
  if (context.args->positional.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'", context.args->command, "' takes one spec file"));
  }
  std::vector<std::string> warnings;
  absl::StatusOr<v1::SweepSpec> spec =
      LoadSpecFile(context.args->positional[0], context.args->GetAll("set"), &warnings);
  for (const std::string& w : warnings) *context.err << "nmctl: warning: " << w << "\n";
  if (!spec.ok()) return spec;
  if (absl::Status count = CheckRunCount(context, *spec); !count.ok()) return count;
  if (absl::Status filled = FillInitialWeightsDigests(&*spec, digests); !filled.ok()) {
    return InFile(context, filled);
  }
  return spec;
}

// Runs whose schedule is too short for the SDGF stages their spec implies, or whose deployable model differs
// from the trained one (DeployWarnings): one warning per distinct text on stderr, naming the runs it
// concerns.
void WarnPerRun(const CommandContext& context, const std::vector<ResolvedRun>& runs) {
  std::vector<std::pair<std::string, std::vector<int>>> warnings;
  for (const ResolvedRun& run : runs) {
    std::vector<std::string> texts = DeployWarnings(run.config);
    texts.insert(texts.begin(),
                 SkippedStagesWarning(run.config.sparsity, SparsityEpochs(run.config.schedule)));
    for (const std::string& text : texts) {
      if (text.empty()) continue;
      auto it =
          std::find_if(warnings.begin(), warnings.end(), [&](const auto& w) { return w.first == text; });
      if (it == warnings.end()) {
        warnings.push_back({text, {run.index}});
      } else {
        it->second.push_back(run.index);
      }
    }
  }
  for (const auto& [text, indices] : warnings) {
    *context.err << "nmctl: warning: " << context.args->positional[0] << ": run(s) "
                 << FormatIndexRanges(indices) << ": " << text << "\n";
  }
}

// Expands locally, so that a bad spec is reported with its file before anything is sent.
absl::StatusOr<std::vector<ResolvedRun>> Expand(const CommandContext& context, const v1::SweepSpec& spec,
                                                WeightsDigests* digests) {
  absl::StatusOr<std::vector<ResolvedRun>> runs = ExpandSweep(spec);
  if (!runs.ok()) return InFile(context, runs.status());
  if (absl::Status st = CheckInitialWeightsDigests(*runs, digests); !st.ok()) return InFile(context, st);
  WarnPerRun(context, *runs);
  return runs;
}

}  // namespace

namespace {

// "early_stopping asha on top1 (max): rung 1 after epoch 1: about 4 of 8 runs go on; ..." (docs/sweeps.md: at
// a rung the best max(1, floor(n / η)) of the n runs that reach it go on).
std::string AshaRungsText(const v1::SweepSpec& spec, size_t runs) {
  const v1::EarlyStopping& es = spec.early_stopping();
  const std::vector<uint32_t> rungs = AshaRungs(es, AshaMaxResource(spec));
  std::string text =
      absl::StrCat("early_stopping ", es.policy(), " on ", VisibleText(es.metric()), " (", es.mode(), "): ");
  if (rungs.empty()) return text + "no rung before the end of training\n";
  size_t reaching = runs;
  for (size_t k = 0; k < rungs.size(); ++k) {
    const size_t kept = std::max<size_t>(1, reaching / es.reduction_factor());
    absl::StrAppend(&text, k == 0 ? "" : "; ", "rung ", k + 1, " after ", es.resource(), " ", rungs[k],
                    ": about ", kept, " of ", reaching, " runs go on");
    reaching = kept;
  }
  absl::StrAppend(&text, "; a rung decides once ", AshaMinPeers(es),
                  " runs have reached it (min_peers), the first ones going on meanwhile\n");
  return text;
}

// Where ASHA's rungs are fair to order, the runs are dispatched in a seeded shuffle keyed by their content
// (schemas/dispatch_order.h); without early stopping, in grid order.
std::vector<size_t> ValidateDispatchOrder(const v1::SweepSpec& spec, const std::vector<ResolvedRun>& runs) {
  std::vector<size_t> order;
  if (spec.early_stopping().policy().empty() || !spec.search().algorithm().empty()) return order;
  std::vector<std::string> hashes;
  for (const ResolvedRun& r : runs) hashes.push_back(r.content_hash);
  for (size_t i : DispatchOrder(spec.seed(), hashes)) order.push_back(runs[i].index);
  return order;
}

// "dispatch order (seed 1, shuffled by content so that the axes' order does not matter): 3, 0, 5, 1, 4, 2".
std::string DispatchOrderText(const v1::SweepSpec& spec, const std::vector<size_t>& order) {
  if (order.empty()) return "";
  constexpr size_t kShown = 20;
  std::vector<size_t> shown(order.begin(), order.begin() + std::min(order.size(), kShown));
  return absl::StrCat(
      "dispatch order (seed ", spec.seed(),
      ", shuffled by content so that the axes' order does not matter): ", absl::StrJoin(shown, ", "),
      order.size() > kShown ? absl::StrCat(", ... (", order.size() - kShown, " more)") : "", "\n");
}

// "G" ranks on one node, "KxG" for a run over K nodes.
std::string RanksText(const ResourceConfig& r) {
  return r.nodes > 1 ? absl::StrCat(r.nodes, "x", r.gpus) : absl::StrCat(r.gpus);
}

// Runs over several nodes need workers that share their work directory (docs/cluster.md).
std::string MultiNodeNote(const std::vector<ResolvedRun>& runs) {
  std::vector<int> multi;
  for (const ResolvedRun& r : runs) {
    if (r.config.resources.nodes > 1) multi.push_back(r.index);
  }
  if (multi.empty()) return "";
  return absl::StrCat(
      "\nrun(s) ", FormatIndexRanges(multi),
      " span several nodes (resources.nodes x resources.gpus): they start only on workers that "
      "declare the same shared storage for their work directory (nmworker --storage NAME), "
      "one worker per node\n");
}

}  // namespace

int RunValidateCommand(const CommandContext& context) {
  WeightsDigests digests;
  absl::StatusOr<v1::SweepSpec> spec = LoadFromArgs(context, &digests);
  if (!spec.ok()) return Fail(context, spec.status());
  absl::StatusOr<std::vector<ResolvedRun>> runs = Expand(context, *spec, &digests);
  if (!runs.ok()) return Fail(context, runs.status());

  // One layer plan (and one transform pipeline) per distinct text: the runs that share it are listed
  // together.
  std::vector<std::pair<std::string, std::vector<int>>> plans;
  std::vector<std::pair<std::string, std::vector<int>>> pipelines;
  std::vector<std::pair<std::string, std::vector<int>>> trainings;  // run_preview.h.
  auto group = [](std::vector<std::pair<std::string, std::vector<int>>>& groups, const std::string& text,
                  int index) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == text; });
    if (it == groups.end()) {
      groups.push_back({text, {index}});
    } else {
      it->second.push_back(index);
    }
  };
  for (const ResolvedRun& run : *runs) {
    // Both were checked when the run was validated; an error here still names the file and the run.
    auto in_run = [&](const absl::Status& st) {
      return absl::Status(st.code(),
                          absl::StrCat(context.args->positional[0], ": run ", run.index, ": ", st.message()));
    };
    absl::StatusOr<std::vector<LayerPlanRow>> rows = DescribeLayerPlan(run.config);
    if (!rows.ok()) return Fail(context, in_run(rows.status()));
    absl::StatusOr<std::string> semi = DescribeSemiStructuredLayers(run.config);
    if (!semi.ok()) return Fail(context, in_run(semi.status()));
    const std::string text = absl::StrCat(
        run.config.model.name, "\n",
        rows->empty() ? "  dense: no layer is sparsified\n" : FormatCollapsedLayerPlan(*rows), *semi);
    group(plans, text, run.index);
    group(trainings, DescribeTraining(run.config), run.index);
    absl::StatusOr<DataPipeline> pipeline = ResolveDataPipeline(run.config);
    if (!pipeline.ok()) return Fail(context, in_run(pipeline.status()));
    group(pipelines, DescribeDataPipeline(*pipeline), run.index);
  }

  if (context.json) {
    Json doc = {{"name", spec->name()}, {"runs", Json::array()}, {"layer_plans", Json::array()}};
    for (const ResolvedRun& run : *runs) {
      Json labels = Json::object();
      for (const auto& [axis, value] : run.labels) labels[axis] = value;
      doc["runs"].push_back({{"index", run.index},
                             {"labels", std::move(labels)},
                             {"content_hash", run.content_hash},
                             {"canonical_yaml", run.canonical_yaml}});
    }
    for (const auto& [text, indices] : plans)
      doc["layer_plans"].push_back({{"plan", text}, {"runs", indices}});
    doc["training"] = Json::array();
    for (const auto& [text, indices] : trainings)
      doc["training"].push_back({{"text", text}, {"runs", indices}});
    const std::vector<size_t> dispatch = ValidateDispatchOrder(*spec, *runs);
    if (!dispatch.empty()) doc["dispatch_order"] = dispatch;
    doc["transforms"] = Json::array();
    for (const auto& [text, indices] : pipelines)
      doc["transforms"].push_back({{"pipeline", text}, {"runs", indices}});
    PrintJson(context, doc);
    return kExitOk;
  }

  std::ostream& out = *context.out;
  out << context.args->positional[0] << ": sweep '" << VisibleText(spec->name(), kMaxCellChars) << "', "
      << (spec->search().algorithm().empty()
              ? absl::StrCat(runs->size(), " run(s)")
              : absl::StrCat("a search of budget ", spec->search().budget(), " run(s)"))
      << "\n";
  if (!spec->search().algorithm().empty()) {
    out << "search " << spec->search().algorithm() << ": the coordinator proposes " << spec->search().budget()
        << " run(s) as results come in; one draw of the random axes is checked here\n";
  }
  if (!spec->early_stopping().policy().empty()) out << AshaRungsText(*spec, runs->size());
  out << DispatchOrderText(*spec, ValidateDispatchOrder(*spec, *runs));
  Table table({"#", "LABELS", "MODEL", "SPARSITY", "EPOCHS", "GPUS", "PRECISION", "HASH"});
  const RowSummary summary(runs->size(), context.args->Has("verbose"));
  for (size_t i = 0; i < runs->size(); ++i) {
    if (!summary.Shown(i)) continue;
    if (summary.AfterGap(i)) table.AddRow({"...", "", "", "", "", "", "", ""});
    const ResolvedRun& run = (*runs)[i];
    const SparsityConfig& s = run.config.sparsity;
    std::string sparsity = RecipeOf(s);
    if (IsNMSparsityType(s.sparsity_type)) {
      absl::StrAppend(&sparsity, " ", s.nm.n, ":", s.nm.m);
      if (s.nm_qkv != s.nm) absl::StrAppend(&sparsity, " (qkv ", s.nm_qkv.n, ":", s.nm_qkv.m, ")");
    }
    table.AddRow({absl::StrCat(run.index), FormatLabels(run.labels), run.config.model.name, sparsity,
                  absl::StrCat(TrainedEpochs(run.config.schedule)), RanksText(run.config.resources),
                  run.config.resources.precision, run.content_hash.substr(0, kHashPrefix)});
  }
  out << table.Render() << summary.Note("run") << MultiNodeNote(*runs);
  for (const auto& [text, indices] : trainings) {
    out << "\ntraining of run(s) " << FormatIndexRanges(indices) << ":\n" << text;
  }
  for (const auto& [text, indices] : plans) {
    out << "\nlayer plan of run(s) " << FormatIndexRanges(indices) << ": " << text;
  }
  for (const auto& [text, indices] : pipelines) {
    out << "\nimage transforms of run(s) " << FormatIndexRanges(indices) << ":\n" << text;
  }
  return kExitOk;
}

absl::StatusOr<int32_t> PriorityOption(const CommandContext& context) {
  int32_t value = 0;
  auto priority = context.args->Get("priority");
  if (priority && !absl::SimpleAtoi(*priority, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("--priority: '", *priority, "' is not an integer"));
  }
  return value;
}

int RunSubmitCommand(const CommandContext& context) {
  WeightsDigests digests;
  absl::StatusOr<v1::SweepSpec> spec = LoadFromArgs(context, &digests);
  if (!spec.ok()) return Fail(context, spec.status());
  absl::StatusOr<int32_t> priority = PriorityOption(context);
  if (!priority.ok()) return Fail(context, priority.status());
  spec->set_priority(*priority);
  if (auto key = context.args->Get("idempotency-key")) {
    if (FirstInvalidUtf8(*key) != std::string::npos) {
      return Fail(context, absl::InvalidArgumentError("--idempotency-key: not UTF-8"));
    }
    spec->set_idempotency_key(*key);
  }
  if (context.args->Has("no-reuse")) spec->set_no_reuse(true);
  absl::StatusOr<std::vector<ResolvedRun>> runs = Expand(context, *spec, &digests);
  if (!runs.ok()) return Fail(context, runs.status());

  v1::SubmitSweepRequest request;
  *request.mutable_spec() = *spec;
  request.set_dry_run(context.args->Has("dry-run"));
  absl::StatusOr<v1::SubmitSweepResponse> response =
      context.connection().Call(&v1::Coordinator::Stub::SubmitSweep, request);
  if (!response.ok()) return Fail(context, response.status());
  if (context.json) {
    PrintJson(context, *response);
    return kExitOk;
  }
  std::ostream& out = *context.out;
  int reused = 0;
  for (const v1::Run& run : response->runs()) reused += run.reused_from() > 0;
  if (request.dry_run()) {
    out << "dry run: sweep '" << VisibleText(spec->name(), kMaxCellChars) << "' expands to "
        << response->runs_size() << " run(s); nothing was stored\n";
  } else if (response->existing()) {
    out << "sweep " << response->sweep().id() << " '" << VisibleText(response->sweep().name(), kMaxCellChars)
        << "' was already submitted with idempotency key '"
        << VisibleText(spec->idempotency_key(), kMaxCellChars) << "'\n";
  } else {
    out << "sweep " << response->sweep().id() << " '" << VisibleText(response->sweep().name(), kMaxCellChars)
        << "': " << response->runs_size() << " run(s) submitted";
    if (reused > 0) out << ", " << reused << " reused from earlier identical runs";
    if (!spec->search().algorithm().empty())
      out << "; " << spec->search().budget() << " in all, proposed by " << spec->search().algorithm()
          << " as runs end";
    out << "\n";
  }
  std::map<std::string, int> states;
  for (const v1::Run& run : response->runs()) ++states[v1::RunState_Name(run.state())];
  std::vector<std::string> state_counts;
  for (const auto& [state, n] : states) state_counts.push_back(absl::StrCat(state, " ", n));
  if (!states.empty()) out << "runs by state: " << absl::StrJoin(state_counts, ", ") << "\n";
  Table table({"RUN", "#", "LABELS", "STATE", "HASH"});
  const RowSummary summary(response->runs_size(), context.args->Has("verbose"));
  for (int i = 0; i < response->runs_size(); ++i) {
    if (!summary.Shown(i)) continue;
    if (summary.AfterGap(i)) table.AddRow({"...", "", "", "", ""});
    const v1::Run& run = response->runs(i);
    std::string state = v1::RunState_Name(run.state());
    if (run.reused_from() > 0) absl::StrAppend(&state, " (reused ", run.reused_from(), ")");
    table.AddRow({run.id() > 0 ? absl::StrCat(run.id()) : "-", absl::StrCat(run.index()), FormatLabels(run),
                  state, run.content_hash().substr(0, kHashPrefix)});
  }
  // After a submit, --verbose would submit again: `nmctl runs` lists the stored runs.
  out << table.Render()
      << summary.Note("run",
                      response->sweep().id() > 0
                          ? absl::StrCat("nmctl runs --sweep ", response->sweep().id(), " lists them all")
                          : "--verbose lists them all");
  for (int i = 0; i < response->runs_size(); ++i) {
    const v1::Run& run = response->runs(i);
    if (summary.Shown(i) && !run.message().empty())
      out << "note: " << (run.id() > 0 ? absl::StrCat("run ", run.id(), ": ") : "")
          << VisibleText(run.message()) << "\n";
  }
  return kExitOk;
}

}  // namespace nmsparse::cli
