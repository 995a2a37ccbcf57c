// Worker leases: a worker silent for longer than the lease is marked not alive; once it has stayed silent for
// the grace period too, the runs it held go back to the queue (attempt fencing keeps its late reports out)
// while retries remain, and fail otherwise. A worker that re-registers within the grace period keeps its
// runs. No lease runs out within a lease of a write that failed for a storage reason (a full disk):
// heartbeats could not be stored then.
#ifndef NMSPARSE_SERVER_SCHEDULING_LEASE_MANAGER_H_
#define NMSPARSE_SERVER_SCHEDULING_LEASE_MANAGER_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "server/background_loop.h"
#include "server/store/store.h"

namespace nmsparse::server {

struct LeaseOptions {
  int64_t lease_ms = 10000;
  int64_t grace_ms = 5000;
};

class LeaseManager {
 public:
  // `on_requeue` runs after a check that put runs back in the queue (the scheduler's Kick).
  LeaseManager(Store* store, LeaseOptions options, std::function<void()> on_requeue)
      : store_(store), options_(options), on_requeue_(std::move(on_requeue)) {}
  ~LeaseManager() { Stop(); }

  // One check at time `now_ms`; returns how many runs were taken from lost workers.
  absl::StatusOr<int> Check(int64_t now_ms);
  // Checks periodically (a quarter of the shorter of lease and grace, at most 200 ms apart).
  void Start();
  void Stop();

 private:
  Store* store_;
  LeaseOptions options_;
  std::function<void()> on_requeue_;
  BackgroundLoop loop_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_LEASE_MANAGER_H_
