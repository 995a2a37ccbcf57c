// One run attempt on this node: writes its spec, starts one trainer process per rank, turns rank 0's JSON
// lines into metric points and everything else into log lines, and decides the attempt's outcome. If one rank
// dies with a non-zero code the others are stopped (SIGTERM, then SIGKILL after a grace period) so that no
// rank is left hanging in a collective.
#ifndef NMSPARSE_WORKER_AGENT_RUN_SUPERVISOR_H_
#define NMSPARSE_WORKER_AGENT_RUN_SUPERVISOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "nmsparse/v1/sweep.pb.h"
#include "worker/agent/run_launch.h"

namespace nmsparse::agent {

enum class StopReason {
  kNone,
  kCancel,    // The coordinator cancelled the run: report CANCELLED.
  kStale,     // The attempt was fenced: stop silently, the coordinator no longer takes its reports.
  kShutdown,  // nmworker itself is stopping: report FAILED so that the run is requeued.
  kHandBack,  // nmworker is leaving (its job's time limit is near): report QUEUED, the run resumes elsewhere
              // without a retry used.
};

struct RunOutcome {
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  bool report = true;  // False for a stale attempt.
  int exit_code = 0;
  std::string message;
};

struct RunCallbacks {
  std::function<void()> on_started;                // Every rank was started.
  std::function<void(v1::MetricPoint)> on_metric;  // run_id/attempt set; seq/at_ms left to the server.
  std::function<void(uint32_t rank, absl::string_view)> on_log;
  std::function<void(const RunOutcome&)> on_done;  // Last call, from the supervisor's thread.
};

class RunSupervisor {
 public:
  RunSupervisor(RunLaunch launch, RunCallbacks callbacks);
  RunSupervisor(const RunSupervisor&) = delete;
  RunSupervisor& operator=(const RunSupervisor&) = delete;
  ~RunSupervisor();  // Stops (as kShutdown) and joins if still running.

  // Starts the supervisor's thread, which owns the rank processes.
  void Start();
  // Asks the ranks to stop; the first reason given wins. Returns at once.
  void Stop(StopReason reason);
  // Waits for the supervisor's thread (on_done has been called).
  void Join();
  bool done() const { return done_.load(); }
  const RunLaunch& launch() const { return launch_; }

  // The rendezvous port a run uses: a free TCP port on the loopback interface.
  static int PickFreePort();
  // Whether a TCP port can be listened on here, on every interface (as rank 0's store listens on
  // MASTER_PORT). SO_REUSEADDR as the store sets it: a port in TIME_WAIT after a previous attempt counts as
  // free.
  static bool PortFree(int port);

 private:
  void Main();
  RunOutcome Supervise();
  void OnStdout(uint32_t rank, absl::string_view line);
  void OnStderr(uint32_t rank, absl::string_view line);
  // Why a successful run on GPU slots is not a success: rank 0's final line names no GPU. "" when fine.
  std::string WrongDevice();

  const RunLaunch launch_;
  const RunCallbacks callbacks_;
  std::thread thread_;
  std::atomic<StopReason> stop_{StopReason::kNone};
  std::atomic<bool> done_{false};

  std::mutex mu_;                        // Guards what the reader threads fill in.
  std::deque<std::string> stderr_tail_;  // Last stderr lines of any rank, for the failure message.
  std::map<std::string, std::string> final_labels_;  // e.g. the device rank 0 trained on.
};

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_RUN_SUPERVISOR_H_
