// nmserver: the coordinator. Serves the Coordinator and WorkerGateway gRPC APIs over one SQLite database.
// Prints "nmserver listening on ADDR" on stderr once serving; SIGTERM or SIGINT shut it down cleanly.
#include <unistd.h>

// `nmserver init` and `nmserver token ...` manage the access tokens instead (server/auth/token_admin.h).
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "common/coordinator_address.h"
#include "common/program_flags.h"
#include "schemas/limits.h"
#include "server/auth/token_admin.h"
#include "server/auth/transport_security.h"
#include "server/cluster/slurm_config.h"
#include "server/cluster/slurm_launcher.h"
#include "server/dashboard/dashboard_server.h"
#include "server/nm_server.h"
#include "server/sweeps/parallel_expander.h"
#include "server/sweeps/schemas_expander.h"

ABSL_FLAG(std::string, listen, nmsparse::DefaultCoordinatorAddress(),
          "host:port to serve on (port 0: any free port; 50151 when left out)");
ABSL_FLAG(std::string, db, "./nmsparse.db", "SQLite database file (created if missing)");
ABSL_FLAG(int64_t, lease_ms, 10000, "a worker silent this long is considered unreachable");
ABSL_FLAG(int64_t, grace_ms, 5000,
          "after the lease, wait this long before requeueing an unreachable worker's runs");
ABSL_FLAG(int64_t, schedule_interval_ms, 1000, "periodic scheduling pass (passes also run on every event)");
ABSL_FLAG(std::string, rendezvous_ports, "29500-29999",
          "FIRST-LAST: multi-node runs meet at a fresh port of this range on their node 0, one per attempt");
ABSL_FLAG(int64_t, max_runs_per_sweep, nmsparse::limits::kDefaultMaxRunsPerSweep,
          "refuse a sweep that expands to more runs than this (counted before expanding)");
ABSL_FLAG(int64_t, max_log_lines_per_run, nmsparse::limits::kDefaultMaxLogLinesPerRun,
          "log lines stored per run; later ones are dropped and counted in one notice line");
ABSL_FLAG(std::string, config, "",
          "server config file (YAML); its slurm: section makes nmserver launch workers through Slurm "
          "(docs/cluster.md)");
ABSL_FLAG(int64_t, max_metric_points_per_run, nmsparse::limits::kDefaultMaxMetricPointsPerRun,
          "metric points stored per run (kind final excepted); later ones are dropped and counted");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (chain): serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA for client certificates (mTLS): WorkerGateway calls must present a certificate it signed");
ABSL_FLAG(bool, insecure, false,
          "serve a non-loopback address without authentication (refused otherwise; see docs/security.md)");
ABSL_FLAG(std::string, http_listen, "",
          "serve the read-only web dashboard on HOST:PORT (off when empty; loopback unless --insecure; "
          "docs/dashboard.md)");
ABSL_FLAG(std::string, token_dir, "", "init: directory for admin.token and worker.token");
ABSL_FLAG(std::string, token_file, "", "token add: the new token's file (created with mode 0600)");
ABSL_FLAG(std::string, role, "user", "token add: worker, user or admin");
ABSL_FLAG(int64_t, expires_in_s, 0, "token add: seconds until the token expires (0: never)");

namespace {

// The address a worker job dials when slurm.coordinator is not set: the listen address, with this host's name
// in place of a wildcard host.
std::string WorkerFacingAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  if (host == "0.0.0.0" || host == "[::]" || host.empty()) {
    char name[256] = {0};
    gethostname(name, sizeof(name) - 1);
    host = name;
  }
  return host + listen.substr(colon);
}

// "FIRST-LAST" within 1..65535.
bool ParsePortRange(const std::string& text, uint32_t* first, uint32_t* last) {
  const size_t dash = text.find('-');
  if (dash == std::string::npos) return false;
  if (!absl::SimpleAtoi(text.substr(0, dash), first) || !absl::SimpleAtoi(text.substr(dash + 1), last))
    return false;
  return *first >= 1 && *first <= *last && *last <= 65535;
}

}  // namespace

int main(int argc, char** argv) {
  const auto positional = nmsparse::ParseProgramFlags(
      argc, argv,
      "nmserver --listen=127.0.0.1:50151 --db=./nmsparse.db [flags]\n"
      "  nmserver init --db=DB --token_dir=DIR\n"
      "  nmserver token add NAME --role=worker|user|admin --token_file=FILE [--expires_in_s=N] --db=DB\n"
      "  nmserver token list --db=DB | nmserver token revoke NAME --db=DB",
      __FILE__);
  if (!positional) return 0;  // --help
  const std::vector<std::string> args(positional->begin() + 1, positional->end());
  if (nmsparse::server::IsTokenAdminCommand(args)) {
    nmsparse::server::TokenAdminFlags flags;
    flags.db_path = absl::GetFlag(FLAGS_db);
    flags.token_dir = absl::GetFlag(FLAGS_token_dir);
    flags.token_file = absl::GetFlag(FLAGS_token_file);
    flags.role = absl::GetFlag(FLAGS_role);
    flags.expires_in_s = absl::GetFlag(FLAGS_expires_in_s);
    return nmsparse::server::RunTokenAdmin(args, flags, std::cout, std::cerr);
  }
  if (positional->size() > 1) {
    std::fprintf(stderr, "nmserver: unexpected argument '%s' (see nmserver --help)\n",
                 (*positional)[1].c_str());
    return 2;
  }
  nmsparse::server::ServerOptions options;
  options.listen = nmsparse::WithDefaultPort(absl::GetFlag(FLAGS_listen));
  options.db_path = absl::GetFlag(FLAGS_db);
  options.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  options.grace_ms = absl::GetFlag(FLAGS_grace_ms);
  options.schedule_interval_ms = absl::GetFlag(FLAGS_schedule_interval_ms);
  options.max_runs_per_sweep = absl::GetFlag(FLAGS_max_runs_per_sweep);
  options.caps.max_log_lines = absl::GetFlag(FLAGS_max_log_lines_per_run);
  options.caps.max_metric_points = absl::GetFlag(FLAGS_max_metric_points_per_run);
  options.security.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.security.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.security.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.security.insecure = absl::GetFlag(FLAGS_insecure);
  options.expand = nmsparse::server::ParallelExpander(nmsparse::server::ExpandWithSchemas,
                                                      static_cast<int>(std::thread::hardware_concurrency()));
  if (options.lease_ms <= 0 || options.grace_ms < 0 || options.schedule_interval_ms <= 0) {
    std::fprintf(stderr, "nmserver: --lease_ms and --schedule_interval_ms must be > 0, --grace_ms >= 0\n");
    return 2;
  }
  if (!ParsePortRange(absl::GetFlag(FLAGS_rendezvous_ports), &options.rendezvous_first_port,
                      &options.rendezvous_last_port)) {
    std::fprintf(
        stderr,
        "nmserver: --rendezvous_ports: value '%s' is not FIRST-LAST with 1 <= FIRST <= LAST <= 65535\n",
        absl::GetFlag(FLAGS_rendezvous_ports).c_str());
    return 2;
  }
  if (options.max_runs_per_sweep <= 0 || options.caps.max_log_lines < 0 ||
      options.caps.max_metric_points < 0) {
    std::fprintf(stderr,
                 "nmserver: --max_runs_per_sweep must be > 0, --max_log_lines_per_run and "
                 "--max_metric_points_per_run >= 0\n");
    return 2;
  }

  if (const std::string config = absl::GetFlag(FLAGS_config); !config.empty()) {
    absl::StatusOr<std::optional<nmsparse::server::SlurmConfig>> slurm =
        nmsparse::server::LoadSlurmConfig(config);
    if (!slurm.ok()) {
      std::fprintf(stderr, "nmserver: --config: %s\n", std::string(slurm.status().message()).c_str());
      return 2;
    }
    if (slurm->has_value()) {
      std::string coordinator = (*slurm)->coordinator;
      if (coordinator.empty()) coordinator = WorkerFacingAddress(options.listen);
      if (coordinator.size() >= 2 && coordinator.substr(coordinator.size() - 2) == ":0") {
        std::fprintf(stderr,
                     "nmserver: %s: worker jobs need a fixed port: set slurm.coordinator or --listen "
                     "with a port other than 0\n",
                     config.c_str());
        return 2;
      }
      options.launcher = std::make_shared<nmsparse::server::SlurmLauncher>(**slurm, coordinator);
    }
  }

  // Signals are taken by sigwait below, never by a handler on a random thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = nmsparse::server::NmServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "nmserver: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const nmsparse::server::TransportPlan& transport = (*server)->transport();
  if (!transport.warning.empty()) {
    std::fprintf(stderr, "\n%s\n%s\n%s\n\n", std::string(78, '!').c_str(), transport.warning.c_str(),
                 std::string(78, '!').c_str());
  }
  std::fprintf(stderr, "nmserver: %s, %s\n",
               transport.kind == nmsparse::server::TransportPlan::Kind::kTls ? "TLS" : "plaintext",
               transport.authenticate ? "tokens required" : "no authentication");
  std::unique_ptr<nmsparse::server::DashboardServer> dashboard;
  if (const std::string http = absl::GetFlag(FLAGS_http_listen); !http.empty()) {
    // Plain HTTP: tokens and pages would cross the network in clear, so only loopback unless --insecure.
    if (!nmsparse::server::IsLoopbackListen(http) && !options.security.insecure) {
      std::fprintf(
          stderr,
          "nmserver: --http_listen %s is not a loopback address: the dashboard is plain HTTP; serve it "
          "on 127.0.0.1 behind a TLS proxy, or pass --insecure\n",
          http.c_str());
      return 2;
    }
    auto started = nmsparse::server::DashboardServer::Start((*server)->coordinator(),
                                                            {http, (*server)->authenticator()});
    if (!started.ok()) {
      std::fprintf(stderr, "nmserver: %s\n", std::string(started.status().message()).c_str());
      return 2;
    }
    dashboard = std::move(*started);
    std::fprintf(stderr, "nmserver dashboard on http://%s:%d/ (%s)\n",
                 http.substr(0, http.rfind(':')).c_str(), dashboard->port(),
                 (*server)->authenticator() ? "tokens required" : "no authentication");
  }
  std::fprintf(stderr, "nmserver listening on %s\n", (*server)->address().c_str());
  std::fflush(stderr);
  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "nmserver: signal %d, shutting down\n", sig);
  if (dashboard) dashboard->Stop();
  (*server)->Shutdown();
  return 0;
}
