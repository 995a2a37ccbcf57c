// The open Assignments streams, one per worker: the scheduler pushes assignments, each worker's stream
// handler waits for and sends them. Ephemeral by nature: a restarted coordinator starts empty and workers
// reconnect.
#ifndef NMSPARSE_SERVER_SCHEDULING_ASSIGNMENT_HUB_H_
#define NMSPARSE_SERVER_SCHEDULING_ASSIGNMENT_HUB_H_

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nmsparse/v1/worker_gateway.pb.h"

namespace nmsparse::server {

class AssignmentHub {
 public:
  // Opens the worker's channel, closing an older one of the same worker; returns its token.
  uint64_t Connect(int64_t worker_id);
  // Closes the channel if `token` is still the worker's current one.
  void Disconnect(int64_t worker_id, uint64_t token);
  bool IsConnected(int64_t worker_id) const;
  // Queues an assignment for the worker's open channel; false when none is open.
  bool Push(int64_t worker_id, const v1::Assignment& a);
  // Waits up to `timeout` and moves queued assignments to `out`. False once the channel is closed or
  // replaced.
  bool Next(int64_t worker_id, uint64_t token, absl::Duration timeout, std::vector<v1::Assignment>* out);
  // Closes every channel and refuses new ones.
  void Shutdown();

 private:
  struct Channel {
    uint64_t token = 0;
    std::deque<v1::Assignment> queue;
  };
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::map<int64_t, Channel> channels_ ABSL_GUARDED_BY(mu_);
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_ASSIGNMENT_HUB_H_
