// Places waiting runs on the slots of live, connected workers and pushes the assignments to their streams.
// A pass runs when kicked (submission, completion, registration, a stream opening) and periodically; passes
// run on one thread, so placements never race each other.
#ifndef NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_
#define NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

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
  // then pushes them. Returns how many runs were placed (a run over several nodes counts once). CompleteRun
  // calls it directly, so a freed slot is refilled without a thread hop.
  absl::StatusOr<int> RunPass();
  // Multi-node runs meet at a fresh port of [first, last] per attempt (nmserver --rendezvous_ports).
  void SetRendezvousPorts(uint32_t first, uint32_t last);
  // Node 0 handed a run's attempt back because its port was taken: counts it. Once as many attempts of the
  // run in a row as the range has ports found theirs taken (so every port was tried, or the range is that
  // busy), returns the range in words ("29500-29549") and starts the count over: that attempt fails
  // instead of going round the range for ever. Kept in memory: a coordinator restart starts counts over.
  std::optional<std::string> CountTakenPort(int64_t run_id);
  // The run's attempt started: its count starts over.
  void ClearTakenPorts(int64_t run_id);
  // Why each waiting multi-node run waits (run id -> "needs 2 nodes with ..."), on the live connected
  // workers as the next pass sees them.
  absl::StatusOr<std::map<int64_t, std::string>> GangWaitReasons(Database* db) const;

 private:
  uint32_t NextPort();

  Store* store_;
  AssignmentHub* hub_;
  absl::Duration interval_;
  absl::Mutex pass_mu_;   // Serialises passes.
  absl::Mutex ports_mu_;  // Never held while taking pass_mu_ (CountTakenPort runs inside a store write).
  uint32_t first_port_ ABSL_GUARDED_BY(ports_mu_) = 29500;
  uint32_t last_port_ ABSL_GUARDED_BY(ports_mu_) = 29999;
  std::map<int64_t, uint32_t> taken_ports_ ABSL_GUARDED_BY(ports_mu_);  // Run id -> hand-backs in a row.
  uint32_t next_port_ ABSL_GUARDED_BY(pass_mu_) = 0;  // Offset of the next attempt's port in the range.
  BackgroundLoop loop_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_SCHEDULER_H_
