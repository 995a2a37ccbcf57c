// nmserver's read-only web dashboard (nmserver --http_listen HOST:PORT; docs/dashboard.md): the sweeps, a
// sweep's runs and figures, a run's live curves and logs, the report, and the JSON endpoints the pages poll.
// cpp-httplib serves it on its own threads (one per open connection, up to a cap: connection_pool.h), so a
// slow or hostile HTTP client holds none of the gRPC server's threads; it reads through the gRPC API's
// handlers and the store's own locking.
// Requests are bounded (body, header, time), nothing is logged about them, and tokens are checked as on the
// gRPC API (http_auth.h).
#ifndef NMSPARSE_SERVER_DASHBOARD_DASHBOARD_SERVER_H_
#define NMSPARSE_SERVER_DASHBOARD_DASHBOARD_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "report/web_assets.h"
#include "server/api/coordinator_service.h"
#include "server/auth/token_authenticator.h"
#include "server/dashboard/sweep_cache.h"
#include "server/dashboard/sweep_reader.h"

namespace httplib {
class Server;
}

namespace nmsparse::server {

struct DashboardOptions {
  std::string listen;  // host:port; port 0 picks a free one.
  // Null: no token is asked for (a loopback coordinator without tokens).
  const TokenAuthenticator* authenticator = nullptr;
  std::string plotly_js_path = report::kPlotlyJsPath;  // Debian python3-plotly.
  SweepCache::Options cache = {};  // How often a live sweep is re-read and its figures redrawn.
};

class DashboardServer {
 public:
  // Binds and starts serving. InvalidArgument for a malformed address, Unavailable when it cannot bind.
  static absl::StatusOr<std::unique_ptr<DashboardServer>> Start(CoordinatorService* coordinator,
                                                                DashboardOptions options);
  ~DashboardServer();

  int port() const { return port_; }
  const SweepCache& cache() const { return *cache_; }
  void Stop();

 private:
  DashboardServer() = default;
  void Route(CoordinatorService* coordinator, const DashboardOptions& options);

  std::shared_ptr<SweepReader> reader_;
  std::shared_ptr<SweepCache> cache_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  CompressedBody plotly_js_, figures_js_;
  absl::Status plotly_status_;  // Why plotly.js could not be read: /static/plotly.js answers it (404).
  int port_ = 0;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_DASHBOARD_SERVER_H_
