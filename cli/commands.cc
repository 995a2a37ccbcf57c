#include "cli/commands.h"

#include <algorithm>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "cli/cluster_commands.h"
#include "cli/exit_codes.h"
#include "cli/live_commands.h"
#include "cli/query_commands.h"
#include "cli/submit_commands.h"

namespace nmsparse::cli {
namespace {

const std::vector<std::string> kGlobalOptions = {"coordinator", "json", "help"};

int RunHelpCommand(const CommandContext& context) {
  *context.out << HelpText();
  return kExitOk;
}

}  // namespace

const std::vector<OptionSpec>& AllOptions() {
  static const auto* options = new std::vector<OptionSpec>{
      {"coordinator", true},
      {"json", false},
      {"help", false, 'h'},
      {"set", true, 0, true},
      {"priority", true},
      {"idempotency-key", true},
      {"no-reuse", false},
      {"dry-run", false},
      {"sweep", true},
      {"state", true},
      {"metric", true},
      {"k", true, 'k'},
      {"minimize", false},
      {"follow", false, 'f'},
      {"format", true},
      {"curves", false},
      {"output", true, 'o'},
      {"logs", false},
      {"max-runs-per-sweep", true},
  };
  return *options;
}

const std::vector<CommandInfo>& Commands() {
  static const auto* commands = new std::vector<CommandInfo>{
      {"validate",
       "FILE [--set key=value]... [--max-runs-per-sweep N]",
       "parse a sweep or experiment file offline: runs, labels, content hashes, layer plans",
       {"set", "max-runs-per-sweep"},
       RunValidateCommand},
      {"submit",
       "FILE [--set key=value]... [--priority N] [--idempotency-key K] [--no-reuse] [--dry-run] "
       "[--max-runs-per-sweep N]",
       "validate, expand and queue a sweep; prints its id",
       {"set", "priority", "idempotency-key", "no-reuse", "dry-run", "max-runs-per-sweep"},
       RunSubmitCommand},
      {"sweeps", "", "all sweeps with their run counts", {}, RunSweepsCommand},
      {"runs",
       "[--sweep S] [--state X]",
       "runs, with state, queue position, labels and final metrics",
       {"sweep", "state"},
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
       "SWEEP [--metric top1] [-k N] [--minimize]",
       "the best succeeded runs of a sweep by a final metric",
       {"metric", "k", "minimize"},
       RunBestCommand},
      {"compare",
       "SWEEP [--metric top1]",
       "a final metric as a table: first grid axis down, second across (as in the paper)",
       {"metric"},
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
      {"export",
       "SWEEP --format csv|json [--curves] [-o FILE]",
       "a sweep's runs and final metrics (and curves)",
       {"format", "curves", "output"},
       RunExportCommand},
      {"workers", "", "registered workers, their slots, liveness and batch job", {}, RunWorkersCommand},
      {"cluster",
       "",
       "the worker pool: the Slurm jobs nmserver launched for workers, and why queued runs wait",
       {},
       RunClusterCommand},
      {"help", "", "this text", {}, RunHelpCommand},
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
  absl::StrAppend(&text,
                  "\nglobal options:\n"
                  "  --coordinator HOST:PORT  coordinator address (default $NMSPARSE_COORDINATOR, else "
                  "127.0.0.1:50151)\n"
                  "  --json                   machine-readable JSON on stdout\n"
                  "\nexit codes: 0 ok, 1 RPC or server error, 2 usage error or invalid spec, 3 not found,\n"
                  "            4 watch/follow: the run ended FAILED or CANCELLED\n");
  return text;
}

int RunNmctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, AllOptions());
  if (!parsed.ok()) {
    err << "nmctl: " << parsed.status().message() << " (see nmctl help)\n";
    return kExitUsage;
  }
  if (parsed->command.empty() || parsed->Has("help")) {
    out << HelpText();
    return parsed->command.empty() && !parsed->Has("help") ? kExitUsage : kExitOk;
  }
  const CommandInfo* command = FindCommand(parsed->command);
  if (command == nullptr) {
    err << "nmctl: unknown command '" << parsed->command << "' (see nmctl help)\n";
    return kExitUsage;
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
  context.out = &out;
  context.err = &err;
  return command->run(context);
}

}  // namespace nmsparse::cli
