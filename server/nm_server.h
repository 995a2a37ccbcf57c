// The whole coordinator in one object: the store, the scheduler and lease threads, and the gRPC server with
// both services. Used by nmserver's main and by in-process tests and benchmarks.
#ifndef NMSPARSE_SERVER_NM_SERVER_H_
#define NMSPARSE_SERVER_NM_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "schemas/limits.h"
#include "server/auth/transport_security.h"
#include "server/cluster/worker_launcher.h"
#include "server/store/event_table.h"
#include "server/sweeps/sweep_expander.h"

namespace grpc {
class Server;
}

namespace nmsparse::server {

class CoordinatorService;
class TokenAuthenticator;

struct ServerOptions {
  std::string listen = "127.0.0.1:50151";  // host:port; port 0 picks a free one.
  std::string db_path = "./nmsparse.db";
  int64_t lease_ms = 10000;
  int64_t grace_ms = 5000;
  int64_t schedule_interval_ms = 1000;  // Periodic scheduling pass (passes also run on every event).
  // Multi-node runs meet at a port of this range on their node 0, a fresh one per attempt.
  uint32_t rendezvous_first_port = 29500;
  uint32_t rendezvous_last_port = 29999;
  SweepExpander expand;  // Validates and expands sweeps (nmserver: ExpandWithSchemas).
  int64_t max_runs_per_sweep = limits::kDefaultMaxRunsPerSweep;  // Larger sweeps are refused unexpanded.
  EventCaps caps;                                                // Log lines and metric points per run.
  // TLS files and --insecure; `listen` is filled in from the field above (server/auth/transport_security.h).
  TransportSecurityOptions security;
  // Launches workers through a cluster scheduler (nmserver --config with a slurm: section); null: workers
  // are started by hand.
  std::shared_ptr<WorkerLauncher> launcher;
  // Tests only: runs on the search proposer's thread before each point it draws, with no lock held
  // (server/sweeps/search_proposer.h); a gate there holds a proposal in progress.
  std::function<void(int64_t sweep_id)> before_proposal_draw;
};

class NmServer {
 public:
  // Opens (and migrates) the database, gives registered workers a fresh lease to re-register in, and serves.
  static absl::StatusOr<std::unique_ptr<NmServer>> Start(ServerOptions options);
  ~NmServer();

  int port() const { return port_; }
  // "host:port" with the bound port.
  std::string address() const;
  // How the port is served: whether calls need tokens, and the warning to print loudly (empty: none).
  const TransportPlan& transport() const;

  // For the dashboard (server/dashboard/): the API's handlers to read through, and the token check when
  // calls need tokens (null otherwise).
  CoordinatorService* coordinator() const;
  const TokenAuthenticator* authenticator() const;
  // Stops serving: open streams end, in-flight calls get a short deadline, background threads stop.
  void Shutdown();

 private:
  struct Parts;
  explicit NmServer(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_NM_SERVER_H_
