#include "worker/agent/agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/agent/agent_log.h"
#include "worker/agent/data_roots.h"
#include "worker/agent/report_fate.h"
#include "worker/agent/run_attempt.h"

namespace nmsparse::agent {
namespace {

AgentOptions WithDataRoots(AgentOptions options) {
  if (options.data_roots.empty()) options.data_roots = DefaultDataRoots(options.work_dir);
  return options;
}

}  // namespace

Agent::Agent(AgentOptions options, std::unique_ptr<CoordinatorClient> client)
    : options_(WithDataRoots(std::move(options))),
      client_(std::move(client)),
      outbox_(options_.outbox_capacity) {}

Agent::~Agent() { Shutdown(std::chrono::milliseconds(0)); }

void Agent::Start() {
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  assignment_thread_ = std::thread([this] { AssignmentLoop(); });
  report_thread_ = std::thread([this] { ReportLoop(); });
}

void Agent::Shutdown(std::chrono::milliseconds flush_timeout) {
  std::map<int64_t, ActiveRun> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lifecycle_ == Lifecycle::kStopped) return;
    lifecycle_ = Lifecycle::kStopping;
  }
  cv_.notify_all();
  client_->CancelAssignments(/*for_good=*/true);
  if (assignment_thread_.joinable()) assignment_thread_.join();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  std::vector<std::thread> exports;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exports.swap(export_threads_);
  }
  for (std::thread& t : exports) t.join();

  // Stop every run; each reports FAILED ("nmworker shut down") through the outbox.
  std::vector<RunSupervisor*> supervisors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, run] : runs_) supervisors.push_back(run.supervisor.get());
  }
  for (RunSupervisor* s : supervisors) s->Stop(StopReason::kShutdown);
  for (RunSupervisor* s : supervisors) s->Join();

  const auto deadline = std::chrono::steady_clock::now() + flush_timeout;
  while (outbox_.size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (outbox_.size() > 0) AgentLog(absl::StrCat("exiting with ", outbox_.size(), " unsent reports"));
  {
    std::lock_guard<std::mutex> lock(mu_);
    lifecycle_ = Lifecycle::kStopped;
    runs.swap(runs_);
  }
  cv_.notify_all();
  outbox_.Close();
  if (report_thread_.joinable()) report_thread_.join();
  runs.clear();  // Supervisors were joined above; destroying them is immediate.
}

void Agent::RequestExit(ExitRequest request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (exit_request_.has_value()) return;
    exit_request_ = std::move(request);
  }
  cv_.notify_all();
}

ExitRequest Agent::WaitForExitRequest() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return exit_request_.has_value(); });
  return *exit_request_;
}

void Agent::CheckIdle() {
  if (options_.idle_exit.count() <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runs_.empty() || lifecycle_ != Lifecycle::kServing) {
      idle_since_ = now;
      return;
    }
    if (now - idle_since_ < options_.idle_exit) return;
  }
  RequestExit({ExitKind::kLeave, absl::StrCat("no run for ", options_.idle_exit.count() / 1000, " s")});
}

void Agent::HandBackUnstarted(const v1::RunAttempt& run) {
  AgentLog(absl::StrCat("leaving: handing back ", AttemptName(run), " unstarted"));
  Report report;
  report.kind = Report::Kind::kComplete;
  report.run = run;
  *report.complete.mutable_run() = run;
  report.complete.set_outcome(v1::QUEUED);
  report.complete.set_message("nmworker is leaving; not started");
  outbox_.Push(std::move(report));
}

void Agent::Leave(const std::string& why, std::chrono::milliseconds flush_timeout) {
  std::vector<RunSupervisor*> supervisors;
  int64_t worker_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lifecycle_ == Lifecycle::kServing) lifecycle_ = Lifecycle::kLeaving;
    worker_id = worker_id_;
    for (auto& [id, run] : runs_) {
      if (!run.supervisor->done()) supervisors.push_back(run.supervisor.get());
    }
  }
  AgentLog(absl::StrCat("leaving (", why, "): handing back ", supervisors.size(), " run(s)"));
  client_->CancelAssignments(/*for_good=*/true);  // A closed stream gets no new runs.
  for (RunSupervisor* s : supervisors) s->Stop(StopReason::kHandBack);
  for (RunSupervisor* s : supervisors) s->Join();
  const auto deadline = std::chrono::steady_clock::now() + flush_timeout;
  while (outbox_.size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (worker_id != 0) {
    v1::HeartbeatRequest request;
    request.set_worker_id(worker_id);
    request.set_leaving(true);
    for (const v1::RunAttempt& run : RunningAttempts()) *request.add_running() = run;
    absl::StatusOr<v1::HeartbeatResponse> response = client_->Heartbeat(request);
    if (!response.ok())
      AgentLog(absl::StrCat("telling the coordinator we leave failed: ", response.status().ToString()));
  }
  Shutdown(std::chrono::milliseconds(1000));
}

void Agent::Backoff(std::chrono::milliseconds* delay, bool reporter, std::chrono::milliseconds cap) {
  std::unique_lock<std::mutex> lock(mu_);
  // The reporter keeps trying while the agent shuts down: it flushes the last reports.
  cv_.wait_for(lock, *delay,
               [this, reporter] { return reporter ? lifecycle_ == Lifecycle::kStopped : Stopping(); });
  *delay = std::min(*delay * 2, cap);
}

std::chrono::milliseconds Agent::RegisterBackoffCap() {
  std::lock_guard<std::mutex> lock(mu_);
  // At least as often as the coordinator wants heartbeats: after its storage failed, it gives every worker
  // one lease to get through (docs/reliability.md).
  return std::min(options_.max_backoff, heartbeat_interval_);
}

absl::Status Agent::RegisterOnce() {
  v1::RegisterRequest request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    request.set_worker_id(worker_id_);
  }
  request.set_host(options_.host);
  request.set_job(options_.job);
  request.set_advertise_addr(options_.advertise_addr);
  request.set_storage(options_.storage);
  for (const v1::Slot& slot : options_.slots.slots) *request.add_slots() = slot;
  for (const v1::RunAttempt& run : RunningAttempts()) *request.add_running() = run;
  absl::StatusOr<v1::RegisterResponse> response = client_->Register(request);
  if (absl::IsPermissionDenied(response.status()) && request.worker_id() != 0) {
    // Another registration holds our old id (ours expired and was taken over): come back as a new worker; the
    // attempts we still run are no longer ours and are stopped by that registration's answer.
    AgentLog(absl::StrCat("worker ", request.worker_id(), " is held by another registration (",
                          response.status().message(), "); registering as a new worker"));
    std::lock_guard<std::mutex> lock(mu_);
    worker_id_ = 0;
    client_->set_session("");
    return absl::AbortedError(response.status().message());  // Not a refusal: tried again at once, anew.
  }
  if (!response.ok()) return response.status();
  if (!response->session().empty()) client_->set_session(response->session());
  {
    std::lock_guard<std::mutex> lock(mu_);
    worker_id_ = response->worker_id();
    if (response->heartbeat_interval_ms() > 0) {
      heartbeat_interval_ = std::chrono::milliseconds(response->heartbeat_interval_ms());
    }
    registered_ = true;
  }
  cv_.notify_all();
  AgentLog(absl::StrCat("registered with ", client_->address(), " as worker ", response->worker_id(), " (",
                        options_.slots.slots.size(), " slots, ", request.running_size(),
                        " running attempts, heartbeat every ", response->heartbeat_interval_ms(), " ms)"));
  StopAttempts(response->stop(), StopReason::kCancel);
  return absl::OkStatus();
}

void Agent::HeartbeatLoop() {
  std::chrono::milliseconds backoff = kInitialBackoff;
  bool reported_unreachable = false;
  for (;;) {
    bool need_register;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (Stopping()) return;
      need_register = !registered_;
    }
    ReapFinished();
    if (need_register) {
      // A fresh stream belongs to the new registration; the old one may hang on a dead connection.
      client_->CancelAssignments(/*for_good=*/false);
      absl::Status status = RegisterOnce();
      if (FateOf(status) == ReportFate::kRefused) {  // Asking again would be refused again: say why, and end.
        const std::string why =
            absl::StrCat("the coordinator ", client_->address(),
                         " refused this worker's registration: ", status.ToString(),
                         "; not retrying: fix the flag or credential it names and start nmworker again");
        AgentLog(why);
        RequestExit({ExitKind::kRefused, why});
        return;
      }
      if (!status.ok()) {
        if (!reported_unreachable) {
          AgentLog(absl::StrCat("cannot register with coordinator ", client_->address(), ": ",
                                status.ToString(), "; retrying"));
          reported_unreachable = true;
        }
        CheckIdle();  // A job's worker that never reaches its coordinator must not hold the node.
        Backoff(&backoff, /*reporter=*/false, RegisterBackoffCap());
        continue;
      }
      reported_unreachable = false;
      backoff = kInitialBackoff;
    }

    int64_t worker_id;
    std::chrono::milliseconds interval;
    {
      std::unique_lock<std::mutex> lock(mu_);
      interval = heartbeat_interval_;
      cv_.wait_for(lock, interval, [this] { return Stopping() || !registered_; });
      if (Stopping()) return;
      if (!registered_) continue;
      worker_id = worker_id_;
    }
    v1::HeartbeatRequest request;
    request.set_worker_id(worker_id);
    for (const v1::RunAttempt& run : RunningAttempts()) *request.add_running() = run;
    absl::StatusOr<v1::HeartbeatResponse> response = client_->Heartbeat(request);
    if (response.ok()) {
      StopAttempts(response->stop(), StopReason::kCancel);
      CheckIdle();
      continue;
    }
    // NOT_FOUND: the coordinator forgot us. Anything else: it may be restarting; register again once it is
    // back, reporting the attempts that kept running meanwhile.
    AgentLog(absl::StrCat("heartbeat failed: ", response.status().ToString(), "; registering again"));
    std::lock_guard<std::mutex> lock(mu_);
    registered_ = false;
  }
}

void Agent::AssignmentLoop() {
  std::chrono::milliseconds backoff = kInitialBackoff;
  for (;;) {
    int64_t worker_id;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return Stopping() || registered_; });
      if (Stopping()) return;
      worker_id = worker_id_;
    }
    const auto opened = std::chrono::steady_clock::now();
    absl::Status status =
        client_->StreamAssignments(worker_id, [this](const v1::Assignment& a) { HandleAssignment(a); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (Stopping()) return;
      if (status.code() == absl::StatusCode::kNotFound || status.code() == absl::StatusCode::kUnavailable) {
        registered_ = false;
      }
    }
    cv_.notify_all();
    if (status.code() != absl::StatusCode::kCancelled) {
      AgentLog(absl::StrCat("assignment stream ended: ", status.ToString()));
    }
    if (std::chrono::steady_clock::now() - opened > std::chrono::seconds(10)) backoff = kInitialBackoff;
    Backoff(&backoff, /*reporter=*/false, options_.max_backoff);
  }
}

}  // namespace nmsparse::agent
