// Places waiting runs on the slots of live, connected workers and pushes the assignments to their streams.
// A pass runs when kicked (submission, completion, registration, a stream opening) and periodically; passes
// run on one thread, so placements never race each other.
#ifndef NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_
#define NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/background_loop.h"
#include "server/scheduling/assignment_hub.h"
#include "server/store/store.h"

namespace nmsparse::server {

class Scheduler {
 public:
  Scheduler(Store* store, AssignmentHub* hub, absl::Duration interval)
      : store_(store), hub_(hub), interval_(interval) {}
  ~Scheduler() { Stop(); }

  void Start();
  void Stop();
  // Asks for a pass soon (coalesced).
  void Kick();
  // One pass now, on the caller's thread (passes never overlap): stores the placements in one transaction,
  // then pushes them. Returns how many were made. CompleteRun calls it directly, so a freed slot is refilled
  // without a thread hop.
  absl::StatusOr<int> RunPass();

 private:
  Store* store_;
  AssignmentHub* hub_;
  absl::Duration interval_;
  absl::Mutex pass_mu_;  // Serialises passes.
  BackgroundLoop loop_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_
