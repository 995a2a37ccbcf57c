#include "cli/commands.h"

#include <algorithm>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "cli/cancel_command.h"
#include "cli/cluster_commands.h"
#include "cli/lineage_commands.h"
#include "cli/live_commands.h"
#include "cli/model_export_command.h"
#include "cli/nmctl_exit_codes.h"
#include "cli/query_commands.h"
#include "cli/report_commands.h"
#include "cli/run_format.h"
#include "cli/submit_commands.h"
#include "common/version.h"

namespace nmsparse::cli {
namespace {

const std::vector<std::string> kGlobalOptions = {"coordinator", "json",   "help",     "version",
                                                 "token-file",  "tls-ca", "tls-cert", "tls-key"};

const OptionSpec& Option(const std::string& name) {
  for (const OptionSpec& o : AllOptions()) {
    if (o.name == name) return o;
  }
  static const OptionSpec kNone;
  return kNone;
}

// "  -k, --k N          how many runs (default 1)"
std::string OptionLine(const OptionSpec& o) {
  std::string names =
      o.short_name != 0 && o.name.size() > 1 ? absl::StrCat("-", std::string(1, o.short_name), ", ") : "";
  absl::StrAppend(&names, o.name.size() == 1 ? "-" : "--", o.name, o.value_name.empty() ? "" : " ",
                  o.value_name);
  return absl::StrCat("  ", names, std::string(names.size() < 28 ? 28 - names.size() : 1, ' '), o.help, "\n");
}

// `nmctl help` or `nmctl help COMMAND`.
int RunHelpCommand(const CommandContext& context) {
  if (context.args->positional.empty()) {
    *context.out << HelpText();
    return kExitOk;
  }
  const CommandInfo* command = FindCommand(context.args->positional[0]);
  if (command == nullptr) {
    return Fail(context, absl::InvalidArgumentError(absl::StrCat(
                             "unknown command '", context.args->positional[0], "' (see nmctl help)")));
  }
  *context.out << CommandHelpText(*command);
  return kExitOk;
}

}  // namespace

const std::vector<OptionSpec>& AllOptions() {
  static const auto* options = new std::vector<OptionSpec>{
      {"coordinator", true, 0, false, "HOST:PORT",
       "coordinator address (default $NMSPARSE_COORDINATOR, else 127.0.0.1:50151; no port means 50151)"},
      {"json", false, 0, false, "", "machine-readable JSON on stdout (ids as numbers, tables as arrays)"},
      {"help", false, 'h', false, "", "this command's help"},
      {"version", false, 0, false, "", "print nmctl's release and exit"},
      {"set", true, 0, true, "key=value",
       "change one key of the base spec (repeatable), e.g. schedule.epochs=5"},
      {"priority", true, 0, false, "N", "higher runs first (default 0)"},
      {"idempotency-key", true, 0, false, "K",
       "a second submit of the same spec with K returns the first sweep (another spec is refused)"},
      {"no-reuse", false, 0, false, "", "retrain runs whose identical content already succeeded"},
      {"dry-run", false, 0, false, "", "expand and check at the coordinator, store nothing"},
      {"verbose", false, 'v', false, "", "list every run (default: counts, the first and last runs)"},
      {"limit", true, 0, false, "N",
       absl::StrCat("at most N runs (0: all; default all, or ", kRunsShownOnTerminal,
                    " when stdout is a terminal)")},
      {"offset", true, 0, false, "N", "skip the first N runs (with --limit: the next page)"},
      {"pool", true, 0, true, "AXIS",
       "average the runs of a grid axis past the second (not shown) as repeats (repeatable)"},
      {"sweep", true, 0, false, "S", "the sweep id"},
      {"state", true, 0, false, "X", "one of " + RunStateNamesText()},
      {"metric", true, 0, false, "NAME", "a final metric (default top1)"},
      {"k", true, 'k', false, "N", "how many runs (default 1)"},
      {"minimize", false, 0, false, "", "lower is better (default: the metric's declared direction)"},
      {"maximize", false, 0, false, "", "higher is better (default: the metric's declared direction)"},
      {"follow", false, 'f', false, "", "keep following until the run ends"},
      {"format", true, 0, false, "FORMAT",
       "export: csv|json|tensorboard (default csv); compare: text|markdown|latex|csv (default text)"},
      {"epoch", true, 0, false, "final|best",
       "compare each run's final metrics (default) or its best evaluated epoch"},
      {"delta", true, 0, false, "ROW",
       "beside each column, the paired difference against row ROW (e.g. dense, a recipe), over seeds"},
      {"curves", false, 0, false, "", "also every metric point"},
      {"output", true, 'o', false, "PATH",
       "export: write to the file PATH instead of stdout; report and export --format tensorboard: the "
       "directory PATH to write into (created)"},
      {"logs", false, 0, false, "", "also the run's log lines"},
      {"weights", true, 0, false, "final|ema",
       "export-model: the checkpoint's final weights (default) or its model EMA's"},
      {"dtype", true, 0, false, "fp32|bf16", "export-model: the tensors' dtype (default fp32)"},
      {"pdf", false, 0, false, "",
       "also each figure as PDF, from its SVG (rsvg-convert, Debian librsvg2-bin)"},
      {"max-runs-per-sweep", true, 0, false, "N",
       "nmctl's limit on a sweep's runs (default $NMSPARSE_MAX_RUNS_PER_SWEEP, else 100,000)"},
      {"token-file", true, 0, false, "FILE",
       "access token, a file of mode 0600 (default $NMSPARSE_TOKEN_FILE, else the token in $NMSPARSE_TOKEN)"},
      {"tls-ca", true, 0, false, "FILE",
       "TLS: the CA of the coordinator's certificate (default $NMSPARSE_TLS_CA)"},
      {"tls-cert", true, 0, false, "FILE", "TLS client certificate (default $NMSPARSE_TLS_CERT)"},
      {"tls-key", true, 0, false, "FILE", "TLS client key (default $NMSPARSE_TLS_KEY)"},
  };
  return *options;
}

const std::vector<CommandInfo>& Commands() {
  static const auto* commands = new std::vector<CommandInfo>{
      {"validate",
       "FILE [--set key=value]... [--max-runs-per-sweep N] [-v]",
       "parse a sweep or experiment file offline: runs, labels, content hashes, layer plans",
       {"set", "max-runs-per-sweep", "verbose"},
       RunValidateCommand},
      {"submit",
       "FILE [--set key=value]... [--priority N] [--idempotency-key K] [--no-reuse] [--dry-run] "
       "[--max-runs-per-sweep N] [-v]",
       "validate, expand and queue a sweep; prints its id",
       {"set", "priority", "idempotency-key", "no-reuse", "dry-run", "max-runs-per-sweep", "verbose"},
       RunSubmitCommand},
      {"sweeps", "", "all sweeps with their run counts", {}, RunSweepsCommand},
      {"runs",
       "[--sweep S] [--state X] [--limit N] [--offset N]",
       "runs, with state, queue position, labels and final metrics",
       {"sweep", "state", "limit", "offset"},
       RunRunsCommand},
      {"run", "ID", "one run: spec, state history, metric curve", {}, RunRunCommand},
      {"watch",
       "ID [--logs]",
       "follow one run live until it ends (exit 4 if it fails or is cancelled)",
       {"logs"},
       RunWatchCommand},
      {"follow",
       "SWEEP",
       "follow a sweep until every run has ended (exit 4 if any did not succeed)",
       {},
       RunFollowCommand},
      {"best",
       "SWEEP [--metric top1] [-k N] [--minimize | --maximize]",
       "the best succeeded runs of a sweep by a final metric",
       {"metric", "k", "minimize", "maximize"},
       RunBestCommand},
      {"compare",
       "SWEEP [--metric top1] [--epoch final|best] [--delta ROW] [--format text|markdown|latex|csv] "
       "[--pool AXIS]...",
       "a metric as the paper's table: first grid axis down, N:M across, seeds pooled, percent mean \u00b1 "
       "std (n)",
       {"metric", "epoch", "delta", "format", "pool"},
       RunCompareCommand},
      {"logs",
       "RUN [-f]",
       "a run's log lines; -f keeps following until the run ends",
       {"follow"},
       RunLogsCommand},
      {"cancel",
       "RUN | --sweep S",
       "cancel one run, or every unfinished run of a sweep",
       {"sweep"},
       RunCancelCommand},
      {"resume",
       "RUN",
       "continue a CANCELLED or FAILED run from its last checkpoint, as its next attempt",
       {},
       RunResumeCommand},
      {"fork",
       "RUN [--set key=value]... [--priority N] [--no-reuse]",
       "a new run from a finished run's last checkpoint, with changed settings (lineage is kept)",
       {"set", "priority", "no-reuse"},
       RunForkCommand},
      {"export",
       "SWEEP --format csv|json [--curves] [-o FILE] | --format tensorboard -o DIR",
       "a sweep's runs and final metrics (and curves); tensorboard: one event file per run under DIR",
       {"format", "curves", "output"},
       RunExportCommand},
      {"export-model",
       "RUN -o DIR [--weights final|ema] [--dtype fp32|bf16]",
       "a finished run's deployable model in timm's format (model.safetensors, config.json, sparsity.json, "
       "README.md), fetched from the worker that holds it",
       {"output", "weights", "dtype"},
       RunExportModelCommand},
      {"report",
       "SWEEP [-o DIR] [--metric top1] [--pdf] [--pool AXIS]...",
       "an HTML report with interactive figures (plotly.js): learning curves, metric vs N:M density and vs "
       "FLOPs (Pareto front), the compare table; each figure also as SVG (and PDF)",
       {"output", "metric", "pdf", "pool"},
       RunReportCommand},
      {"workers", "", "registered workers, their slots, liveness and batch job", {}, RunWorkersCommand},
      {"cluster",
       "",
       "the worker pool: the Slurm jobs nmserver launched for workers, and why queued runs wait",
       {},
       RunClusterCommand},
      {"help", "[COMMAND]", "this text, or one command's options", {}, RunHelpCommand},
  };
  return *commands;
}

const CommandInfo* FindCommand(const std::string& name) {
  for (const CommandInfo& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string HelpText() {
  std::string text =
      "nmctl: the nmsparse command line (submit, watch and compare N:M sparsity sweeps)\n\n"
      "usage: nmctl [--coordinator HOST:PORT] [--json] COMMAND [ARGS]\n\ncommands:\n";
  for (const CommandInfo& c : Commands()) {
    absl::StrAppend(&text, "  ", c.name, c.usage.empty() ? "" : " " + c.usage, "\n      ", c.summary, "\n");
  }
  absl::StrAppend(
      &text,
      "\nglobal options:\n"
      "  --coordinator HOST:PORT  coordinator address (default $NMSPARSE_COORDINATOR, else "
      "127.0.0.1:50151)\n"
      "  --json                   machine-readable JSON on stdout\n"
      "  --version                nmctl's release\n"
      "  --token-file FILE        access token, a file of mode 0600 (default $NMSPARSE_TOKEN_FILE, "
      "else the token in $NMSPARSE_TOKEN)\n"
      "  --tls-ca FILE            TLS: the CA of the coordinator's certificate (default $NMSPARSE_TLS_CA)\n"
      "  --tls-cert/--tls-key F   TLS client certificate and key (default $NMSPARSE_TLS_CERT/_KEY)\n"
      "\nnmctl COMMAND --help (or nmctl help COMMAND) lists a command's options.\n"
      "\nexit codes: 0 ok, 1 RPC or server error, 2 usage error or invalid spec, 3 not found,\n"
      "            4 watch/follow: the run ended FAILED or CANCELLED\n");
  return text;
}

std::string CommandHelpText(const CommandInfo& command) {
  std::string text = absl::StrCat("usage: nmctl ", command.name, command.usage.empty() ? "" : " ",
                                  command.usage, "\n\n", command.summary, "\n");
  if (!command.options.empty()) {
    absl::StrAppend(&text, "\noptions:\n");
    for (const std::string& name : command.options) absl::StrAppend(&text, OptionLine(Option(name)));
  }
  absl::StrAppend(&text, "\nglobal options:\n");
  for (const std::string& name : kGlobalOptions) absl::StrAppend(&text, OptionLine(Option(name)));
  absl::StrAppend(&text, "\nexit codes: see nmctl help; docs/nmctl.md has every command in full\n");
  return text;
}

namespace {

int RunVisibleNmctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                    bool out_is_terminal, VisibleOutput* out_filter) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, AllOptions());
  if (!parsed.ok()) {
    err << "nmctl: " << parsed.status().message() << " (see nmctl help)\n";
    return kExitUsage;
  }
  if (parsed->Has("version")) {
    out << VersionText("nmctl");
    return kExitOk;
  }
  if (parsed->command.empty()) {
    out << HelpText();
    return parsed->Has("help") ? kExitOk : kExitUsage;
  }
  const CommandInfo* command = FindCommand(parsed->command);
  if (command == nullptr) {
    err << "nmctl: unknown command '" << parsed->command << "' (see nmctl help)\n";
    return kExitUsage;
  }
  if (parsed->Has("help")) {  // `nmctl submit --help`: that command's usage and options.
    out << CommandHelpText(*command);
    return kExitOk;
  }
  for (const auto& [name, values] : parsed->options) {
    const bool allowed =
        std::find(kGlobalOptions.begin(), kGlobalOptions.end(), name) != kGlobalOptions.end() ||
        std::find(command->options.begin(), command->options.end(), name) != command->options.end();
    if (!allowed) {
      err << "nmctl: '" << command->name << "' takes no option --" << name << " (usage: nmctl "
          << command->name << " " << command->usage << ")\n";
      return kExitUsage;
    }
  }
  CommandContext context;
  context.args = &*parsed;
  context.coordinator = ResolveCoordinatorAddress(parsed->Get("coordinator").value_or(""));
  context.json = parsed->Has("json");
  context.security.token_file = parsed->Get("token-file").value_or("");
  context.security.tls_ca = parsed->Get("tls-ca").value_or("");
  context.security.tls_cert = parsed->Get("tls-cert").value_or("");
  context.security.tls_key = parsed->Get("tls-key").value_or("");
  context.terminal = out_is_terminal;
  context.out = &out;
  context.err = &err;
  context.out_filter = out_filter;
  return command->run(context);
}

}  // namespace

int RunNmctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             bool out_is_terminal) {
  // Everything nmctl prints, answers and arguments alike, is shown without display controls.
  VisibleOutput out_filter(out), err_filter(err);
  std::ostream visible_out(&out_filter), visible_err(&err_filter);
  return RunVisibleNmctl(args, visible_out, visible_err, out_is_terminal, &out_filter);
}

}  // namespace nmsparse::cli
