// The dashboard's task queue (cpp-httplib's new_task_queue): a thread for each open connection, started as
// connections need one, up to a cap far above what browsers open. cpp-httplib 0.11 (Debian's) gives each
// connection a thread for as long as its client keeps it within the timeouts, and a client that trickles a
// byte at a time keeps it for as long as it likes: the fixed pool of 24 was starved by 24 idle sockets
// (issue 36). Here a few idle or slow sockets hold only their own threads; past the cap, connections wait in
// the queue. Threads started for a burst stay (idle, blocked) until shutdown.
#ifndef NMSPARSE_SERVER_DASHBOARD_CONNECTION_POOL_H_
#define NMSPARSE_SERVER_DASHBOARD_CONNECTION_POOL_H_

#include <httplib.h>

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace nmsparse::server {

class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(int max_threads) : max_threads_(max_threads) {}
  ~ConnectionPool() override { shutdown(); }

  void enqueue(std::function<void()> task) override;
  // Runs what is queued, then joins every thread.
  void shutdown() override;

  int threads() const;

 private:
  void Work();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_threads_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // Threads waiting for a task.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_CONNECTION_POOL_H_
