// The worker agent: registers the node's slots with the coordinator, keeps its lease, takes assignments, runs
// each one under a RunSupervisor and sends its reports. It keeps runs going while the coordinator is away
// (reports wait in a bounded outbox), re-registers with its old id and its running attempts when the
// coordinator comes back, and stops attempts the coordinator fences or cancels.
#ifndef NMSPARSE_WORKER_AGENT_AGENT_H_
#define NMSPARSE_WORKER_AGENT_AGENT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/report_outbox.h"
#include "worker/agent/run_supervisor.h"
#include "worker/agent/slots.h"

namespace nmsparse::agent {

struct AgentOptions {
  std::string host;
  std::string work_dir;                 // Runs live in <work_dir>/runs/<run_id>/.
  std::vector<std::string> data_roots;  // Datasets must resolve under one of these; empty: DefaultDataRoots.
  std::string trainer;                  // The nmtrain binary.
  NodeSlots slots;
  int trainer_threads = 0;  // > 0: passed to nmtrain as --threads.
  size_t outbox_capacity = 100000;
  std::chrono::milliseconds kill_grace{5000};
  std::chrono::milliseconds max_backoff{3000};
  std::string job;             // The batch job this worker runs in ("slurm:<id>"), sent on Register.
  std::string advertise_addr;  // Where other nodes reach it (empty: the coordinator's view of it).
  std::string storage;         // The shared storage work_dir is on (empty: none).
  std::string socket_ifname;   // The ranks' GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME (empty: unset).
  std::chrono::milliseconds idle_exit{0};  // > 0: with no run for this long, ask to leave (RequestExit).
};

// Why nmworker should end: a shutdown (SIGTERM, SIGINT: runs reported FAILED and requeued while retries
// remain), leaving (Slurm's signal before the time limit, or idle past --idle_exit_ms: runs are stopped at
// a checkpoint and handed back without costing a retry), or a registration the coordinator refused for good
// (a bad --advertise_addr or credential: trying again would be refused again; shut down like kShutdown, and
// nmworker exits contract::kWorkerExitRegistrationRefused).
enum class ExitKind { kShutdown, kLeave, kRefused };
struct ExitRequest {
  ExitKind kind = ExitKind::kShutdown;
  std::string why;
};

class Agent {
 public:
  Agent(AgentOptions options, std::unique_ptr<CoordinatorClient> client);
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  ~Agent();

  void Start();
  // Stops every run (reported FAILED so that the coordinator requeues it), sends what it can within
  // `flush_timeout`, and joins the agent's threads.
  void Shutdown(std::chrono::milliseconds flush_timeout = std::chrono::milliseconds(3000));
  // Stops every run at a checkpoint and hands it back (CompleteRun QUEUED), tells the coordinator it is
  // leaving (no more runs; assignments still on their way go back to the queue), then shuts down.
  void Leave(const std::string& why, std::chrono::milliseconds flush_timeout = std::chrono::seconds(30));
  // Asks main to end the agent (the first request wins); WaitForExitRequest returns it.
  void RequestExit(ExitRequest request);
  ExitRequest WaitForExitRequest();

 private:
  struct ActiveRun {
    uint32_t attempt = 0;
    std::unique_ptr<RunSupervisor> supervisor;
    bool awaiting_delivery = false;  // Its CompleteRun is in the outbox.
  };

  // Where the agent is in its life; it only moves forward, in this order. Shutdown stops the loops first and
  // the reporter last, so that the runs' final reports still go out.
  enum class Lifecycle {
    kServing,   // Takes assignments.
    kLeaving,   // Leave: assignments are handed back unstarted; heartbeats go on.
    kStopping,  // Shutdown: the heartbeat and assignment loops end; the reporter flushes the outbox.
    kStopped,   // The reporter ends too.
  };
  // With mu_ held: the heartbeat and assignment loops end.
  bool Stopping() const { return lifecycle_ >= Lifecycle::kStopping; }

  void HeartbeatLoop();
  void AssignmentLoop();
  void ReportLoop();

  absl::Status RegisterOnce();
  // Starts the assigned attempt under a RunSupervisor, unless it is refused or handed back; or, for a model
  // export order, the export on a thread of its own (model_export_upload.h).
  void HandleAssignment(const v1::Assignment& assignment);
  void StartModelExport(const v1::ModelExportOrder& order);
  // Whether the agent takes `run`: not while leaving (handed back unstarted) or stopping, nor twice when a
  // reconnect sends it again. An older attempt of the run is stopped first.
  bool ClaimRun(const v1::RunAttempt& run);
  void StopStaleAttempt(int64_t run_id, const ActiveRun& stale);
  RunLaunch MakeLaunch(const v1::Assignment& assignment) const;
  // Fails `run` before any trainer starts, with `why` in its message.
  void Refuse(const v1::RunAttempt& run, const absl::Status& why);
  // Hands a gang's attempt back unstarted (no retry used) when this node 0 cannot listen on its MASTER_PORT.
  void HandBackTakenPort(const v1::RunAttempt& run, int port);
  // What the supervisor reports (start, metrics, log lines, the outcome) goes into the outbox.
  RunCallbacks ReportingCallbacks(const v1::RunAttempt& run);
  void StartSupervisor(const v1::RunAttempt& run, RunLaunch launch);
  void StopAttempts(const google::protobuf::RepeatedPtrField<v1::RunAttempt>& attempts, StopReason reason);
  // A fork needs its parent's checkpoint in launch.init_from unless its own run directory has one already.
  absl::Status CheckForkSource(const RunLaunch& launch, int64_t parent_run_id) const;
  void OnRunDone(const v1::RunAttempt& run, const RunOutcome& outcome);
  // The attempt's CompleteRun went out (or was refused): the run leaves the agent.
  void Retire(const v1::RunAttempt& run);
  void ReapFinished();
  // Asks to leave when the agent has had no run for options_.idle_exit.
  void CheckIdle();
  void HandBackUnstarted(const v1::RunAttempt& run);
  std::vector<v1::RunAttempt> RunningAttempts();
  absl::Status Send(const std::vector<Report>& batch);
  // Waits `delay` (less when stopping), then doubles it up to `cap`.
  // The first wait after a failed call; it doubles up to a cap while calls keep failing.
  static constexpr std::chrono::milliseconds kInitialBackoff{200};
  void Backoff(std::chrono::milliseconds* delay, bool reporter, std::chrono::milliseconds cap);
  std::chrono::milliseconds RegisterBackoffCap();

  const AgentOptions options_;
  const std::unique_ptr<CoordinatorClient> client_;
  ReportOutbox outbox_;

  std::mutex mu_;
  std::condition_variable cv_;
  Lifecycle lifecycle_ = Lifecycle::kServing;
  // Apart from the lifecycle: the coordinator may forget this worker (or restart) at any stage, and the
  // agent registers again while serving or leaving. False until the first Register, and again after a failed
  // heartbeat or an assignment stream that lost the worker.
  bool registered_ = false;
  int64_t worker_id_ = 0;
  std::chrono::milliseconds heartbeat_interval_{1000};
  std::map<int64_t, ActiveRun> runs_;
  std::optional<ExitRequest> exit_request_;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();

  std::thread heartbeat_thread_;
  std::thread assignment_thread_;
  std::thread report_thread_;
  std::vector<std::thread> export_threads_;  // Guarded by mu_; joined by Shutdown.
};

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_AGENT_H_
