// nmworker: the worker agent of one node. See docs/nmworker.md and worker/agent/agent.h.
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/client_security.h"
#include "common/coordinator_address.h"
#include "common/program_flags.h"
#include "contract/nmworker_exit_codes.h"
#include "worker/agent/agent.h"
#include "worker/agent/agent_log.h"
#include "worker/agent/data_roots.h"
#include "worker/agent/rank_process.h"
#include "worker/agent/slots.h"

ABSL_FLAG(std::string, coordinator, nmsparse::DefaultCoordinatorAddress(),
          "Coordinator address host:port (port 50151 when left out).");
ABSL_FLAG(std::string, work_dir, "nmworker_work", "Run directories go to <work_dir>/runs/<run_id>/.");
ABSL_FLAG(
    std::string, trainer, "",
    "The nmtrain binary. Default: next to nmworker (also ../trainer/nmtrain, the Bazel layout), else PATH.");
ABSL_FLAG(std::string, gpus, "auto",
          "GPUs to offer: auto (nvidia-smi), none, a count, or CUDA devices '0,2'.");
ABSL_FLAG(int, cpu_slots, -1,
          "CPU slots to offer (also --cpu-slots). Default: 1 if there is no GPU, else 0.");
ABSL_FLAG(int, trainer_threads, 0, "Intra-op threads per rank, passed as nmtrain --threads (0: the spec's).");
ABSL_FLAG(
    std::string, advertise_addr, "",
    "Address the other nodes of a multi-node run reach this worker at (its ranks' rendezvous when it is "
    "node 0); default: the address this worker reached the coordinator from.");
ABSL_FLAG(std::string, storage, "",
          "Name of the shared storage --work_dir is on (the same directory on every worker naming it); only "
          "workers declaring the same name form one multi-node run. Default: none (single-node runs only).");
ABSL_FLAG(std::string, socket_ifname, "",
          "Network interface for the ranks' collectives: set as GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME.");
ABSL_FLAG(std::string, host, "", "Host name reported to the coordinator (default: gethostname).");
ABSL_FLAG(int, kill_grace_ms, 5000, "Time between SIGTERM and SIGKILL when stopping ranks.");
ABSL_FLAG(std::vector<std::string>, data_root, {},
          "A directory runs may read datasets from (repeatable, or comma-separated). Default: Debian's "
          "Fashion-MNIST directory, $NMSPARSE_FASHION_MNIST and --work_dir.");
ABSL_FLAG(
    std::string, token_file, "",
    "Access token of role worker, in a file of mode 0600 (default $NMSPARSE_TOKEN_FILE, else the token in "
    "$NMSPARSE_TOKEN).");
ABSL_FLAG(std::string, tls_ca, "",
          "TLS: PEM CA of the coordinator's certificate (default $NMSPARSE_TLS_CA).");
ABSL_FLAG(std::string, tls_cert, "",
          "mTLS: PEM client certificate, with --tls_key (default $NMSPARSE_TLS_CERT).");
ABSL_FLAG(std::string, tls_key, "", "mTLS: PEM private key of --tls_cert (default $NMSPARSE_TLS_KEY).");
ABSL_FLAG(std::string, job, "",
          "The batch job this worker runs in, e.g. slurm:$SLURM_JOB_ID (set by nmserver's Slurm launcher).");
ABSL_FLAG(int64_t, idle_exit_ms, 0,
          "Leave (exit 0) after this long with no run; 0: never. Set by nmserver's Slurm launcher.");
ABSL_FLAG(int64_t, outbox_capacity, 100000,
          "Reports kept while the coordinator is away or slow; past it a flood's log lines between its first "
          "and its latest are dropped and counted.");

namespace {

using nmsparse::agent::AgentLog;

std::string SelfDirectory() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  std::string path(buffer, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::string FindTrainer(const std::string& flag) {
  if (!flag.empty()) return flag;
  const std::string self = SelfDirectory();
  for (const std::string& candidate : {self + "/nmtrain", self + "/../trainer/nmtrain"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  absl::StatusOr<std::string> in_path = nmsparse::agent::ResolveProgram("nmtrain");
  return in_path.ok() ? *in_path : "nmtrain";
}

std::string HostName(const std::string& flag) {
  if (!flag.empty()) return flag;
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "localhost";
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  const auto positional = nmsparse::ParseProgramFlags(
      argc, argv,
      "nmworker --coordinator=HOST:PORT --work_dir=DIR [--gpus=auto|N|0,1] [--cpu-slots=N] [flags]",
      __FILE__);
  if (!positional) return 0;  // --help
  if (positional->size() > 1) {
    AgentLog(absl::StrCat("unexpected argument '", (*positional)[1], "' (see nmworker --help)"));
    return nmsparse::contract::kWorkerExitUsage;
  }

  // Signals are taken by sigwait below; every thread started from here on inherits the blocked mask (ranks
  // get an empty mask back in RankProcess).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGUSR1);  // Slurm's warning before the time limit (sbatch --signal=B:USR1@S).
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::vector<nmsparse::agent::GpuInfo> detected;
  const std::string gpus_flag = absl::GetFlag(FLAGS_gpus);
  if (gpus_flag != "none" && gpus_flag != "0" && gpus_flag.find(',') == std::string::npos) {
    detected = nmsparse::agent::DetectGpus();
  }
  absl::StatusOr<nmsparse::agent::NodeSlots> slots =
      nmsparse::agent::BuildSlots(gpus_flag, absl::GetFlag(FLAGS_cpu_slots), detected);
  if (!slots.ok()) {
    AgentLog(slots.status().message());
    return nmsparse::contract::kWorkerExitUsage;
  }

  nmsparse::ClientSecurityFlags security_flags{absl::GetFlag(FLAGS_token_file), absl::GetFlag(FLAGS_tls_ca),
                                               absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key)};
  absl::StatusOr<nmsparse::ClientSecurity> security = nmsparse::ResolveClientSecurity(security_flags);
  if (!security.ok()) {
    AgentLog(security.status().message());
    return nmsparse::contract::kWorkerExitUsage;
  }

  nmsparse::agent::AgentOptions options;
  options.host = HostName(absl::GetFlag(FLAGS_host));
  options.work_dir = absl::GetFlag(FLAGS_work_dir);
  options.trainer = FindTrainer(absl::GetFlag(FLAGS_trainer));
  options.slots = *slots;
  options.trainer_threads = absl::GetFlag(FLAGS_trainer_threads);
  options.kill_grace = std::chrono::milliseconds(absl::GetFlag(FLAGS_kill_grace_ms));
  options.job = absl::GetFlag(FLAGS_job);
  options.advertise_addr = absl::GetFlag(FLAGS_advertise_addr);
  options.storage = absl::GetFlag(FLAGS_storage);
  options.socket_ifname = absl::GetFlag(FLAGS_socket_ifname);
  options.idle_exit = std::chrono::milliseconds(std::max<int64_t>(absl::GetFlag(FLAGS_idle_exit_ms), 0));
  options.outbox_capacity = static_cast<size_t>(std::max<int64_t>(absl::GetFlag(FLAGS_outbox_capacity), 2));
  if (options.work_dir.empty() || options.work_dir[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) options.work_dir = absl::StrCat(cwd, "/", options.work_dir);
  }
  options.data_roots = nmsparse::RepeatedFlagValues(argc, argv, "data_root");
  if (options.data_roots.empty()) options.data_roots = nmsparse::agent::DefaultDataRoots(options.work_dir);
  std::vector<std::string> slot_names;
  for (const auto& slot : options.slots.slots) {
    slot_names.push_back(absl::StrCat(slot.index(), ":", slot.name(),
                                      slot.memory_mb() ? absl::StrCat("/", slot.memory_mb(), "MB") : ""));
  }
  AgentLog(absl::StrCat("host ", options.host, ", slots [", absl::StrJoin(slot_names, ", "), "], trainer ",
                        options.trainer, ", work dir ", options.work_dir, ", data roots [",
                        absl::StrJoin(options.data_roots, ", "), "], coordinator ",
                        absl::GetFlag(FLAGS_coordinator), security->token.empty() ? "" : " (with token)"));

  nmsparse::agent::Agent agent(
      options, std::make_unique<nmsparse::agent::CoordinatorClient>(
                   nmsparse::WithDefaultPort(absl::GetFlag(FLAGS_coordinator)), *std::move(security)));
  agent.Start();
  // Signals become exit requests; so does the agent's own idle timer.
  std::thread([&agent, signals] {
    int received = 0;
    sigwait(&signals, &received);
    if (received == SIGUSR1) {
      agent.RequestExit({nmsparse::agent::ExitKind::kLeave, "SIGUSR1: the job's time limit is near"});
    } else {
      agent.RequestExit({nmsparse::agent::ExitKind::kShutdown, absl::StrCat("signal ", received)});
    }
  }).detach();
  const nmsparse::agent::ExitRequest request = agent.WaitForExitRequest();
  if (request.kind == nmsparse::agent::ExitKind::kLeave) {
    agent.Leave(request.why);
  } else if (request.kind == nmsparse::agent::ExitKind::kRefused) {
    agent.Shutdown();  // The reason is in the log already.
    AgentLog(absl::StrCat("stopped: registration refused (exit ",
                          nmsparse::contract::kWorkerExitRegistrationRefused, ")"));
    return nmsparse::contract::kWorkerExitRegistrationRefused;
  } else {
    AgentLog(absl::StrCat("received ", request.why, ": stopping ranks and exiting"));
    agent.Shutdown();
  }
  AgentLog("stopped");
  return 0;
}
