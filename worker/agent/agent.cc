#include "worker/agent/agent.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/unicode_text.h"
#include "contract/exit_codes.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "schemas/limits.h"
#include "worker/agent/agent_log.h"
#include "worker/agent/data_roots.h"
#include "worker/agent/report_fate.h"

namespace nmsparse::agent {
namespace {

constexpr size_t kMaxBatch = 256;
constexpr std::chrono::milliseconds kInitialBackoff{200};

std::string AttemptName(const v1::RunAttempt& run) {
  return absl::StrCat("run ", run.run_id(), " attempt ", run.attempt());
}

v1::RunAttempt MakeAttempt(int64_t run_id, uint32_t attempt) {
  v1::RunAttempt run;
  run.set_run_id(run_id);
  run.set_attempt(attempt);
  return run;
}

// A trainer's log line as the coordinator takes it.
Report LogReport(const v1::RunAttempt& run, uint32_t rank, absl::string_view text) {
  Report report;
  report.kind = Report::Kind::kLog;
  report.run = run;
  report.line.set_run_id(run.run_id());
  report.line.set_attempt(run.attempt());
  report.line.set_rank(rank);
  // Proto3 strings are UTF-8: one stray byte would make the coordinator refuse the whole report.
  report.line.set_text(limits::CutLogLine(ValidUtf8(std::string_view(text.data(), text.size()))));
  report.line.set_at_ms(absl::ToUnixMillis(absl::Now()));
  return report;
}

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
  for (const v1::Slot& slot : options_.slots.slots) *request.add_slots() = slot;
  for (const v1::RunAttempt& run : RunningAttempts()) *request.add_running() = run;
  absl::StatusOr<v1::RegisterResponse> response = client_->Register(request);
  if (!response.ok()) return response.status();
  client_->set_worker_id(response->worker_id());
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

void Agent::HandleAssignment(const v1::Assignment& assignment) {
  const v1::RunAttempt run = MakeAttempt(assignment.run_id(), assignment.attempt());
  if (!ClaimRun(run)) return;
  RunLaunch launch = MakeLaunch(assignment);
  // A data path outside the data roots, or a fork whose parent's checkpoint is not here, fails the attempt
  // before any trainer starts, with the reason in the run's message. A data error, not a bad spec: both
  // depend on this worker (its roots, its files), and another worker may take the retry.
  absl::Status refused = CheckRunDataAccess(launch.spec_yaml, launch.run_dir, options_.data_roots);
  if (refused.ok()) refused = CheckForkSource(launch, assignment.init_from_run());
  if (!refused.ok()) {
    Refuse(run, refused);
    return;
  }
  AgentLog(absl::StrCat("starting ", AttemptName(run), " with ", launch.ranks.size(), " rank(s) in ",
                        launch.run_dir, assignment.resume() ? " (resume)" : ""));
  StartSupervisor(run, std::move(launch));
}

bool Agent::ClaimRun(const v1::RunAttempt& run) {
  ActiveRun previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Stopping()) return false;
    if (lifecycle_ == Lifecycle::kLeaving) {
      HandBackUnstarted(run);
      return false;
    }
    auto it = runs_.find(run.run_id());
    if (it != runs_.end()) {
      if (it->second.attempt >= run.attempt())
        return false;  // Sent again after a reconnect: already running.
      previous = std::move(it->second);
      runs_.erase(it);
    }
  }
  if (previous.supervisor != nullptr) StopStaleAttempt(run.run_id(), previous);
  return true;
}

void Agent::StopStaleAttempt(int64_t run_id, const ActiveRun& stale) {
  // The same run directory is reused: the old attempt must be gone before the new one starts.
  AgentLog(absl::StrCat("stopping stale attempt ", stale.attempt, " of run ", run_id));
  stale.supervisor->Stop(StopReason::kStale);
  stale.supervisor->Join();
  outbox_.DropAttempt(MakeAttempt(run_id, stale.attempt));
}

RunLaunch Agent::MakeLaunch(const v1::Assignment& assignment) const {
  RunLaunch launch;
  launch.run_id = assignment.run_id();
  launch.attempt = assignment.attempt();
  launch.spec_yaml = assignment.resolved_spec();
  // The run's numeric id, never its name, is the path component: a spec cannot steer where files go.
  launch.run_dir = contract::RunDirectory(options_.work_dir, assignment.run_id());
  if (assignment.init_from_run() != 0) {
    launch.init_from = contract::RunDirectory(options_.work_dir, assignment.init_from_run());
  }
  launch.trainer = options_.trainer;
  if (options_.trainer_threads > 0)
    launch.trainer_args = {contract::kThreadsFlag, absl::StrCat(options_.trainer_threads)};
  launch.kill_grace = options_.kill_grace;
  for (uint32_t slot : assignment.slots()) {
    RankDevice device;
    if (slot < options_.slots.devices.size()) device.gpu = options_.slots.devices[slot];
    launch.ranks.push_back(device);
  }
  if (launch.ranks.empty()) launch.ranks.push_back(RankDevice{});
  return launch;
}

void Agent::Refuse(const v1::RunAttempt& run, const absl::Status& why) {
  AgentLog(absl::StrCat("refusing ", AttemptName(run), ": ", why.message()));
  RunOutcome outcome;
  outcome.state = v1::FAILED;
  outcome.exit_code = contract::kExitData;
  outcome.message = absl::StrCat("refused by nmworker on ", options_.host, ": ", why.message());
  OnRunDone(run, outcome);
}

RunCallbacks Agent::ReportingCallbacks(const v1::RunAttempt& run) {
  RunCallbacks callbacks;
  callbacks.on_started = [this, run] {
    Report report;
    report.kind = Report::Kind::kStart;
    report.run = run;
    outbox_.Push(std::move(report));
  };
  callbacks.on_metric = [this, run](v1::MetricPoint point) {
    Report report;
    report.kind = Report::Kind::kMetric;
    report.run = run;
    report.point = std::move(point);
    outbox_.Push(std::move(report));
  };
  callbacks.on_log = [this, run](uint32_t rank, absl::string_view text) {
    outbox_.Push(LogReport(run, rank, text));
  };
  callbacks.on_done = [this, run](const RunOutcome& outcome) { OnRunDone(run, outcome); };
  return callbacks;
}

void Agent::StartSupervisor(const v1::RunAttempt& run, RunLaunch launch) {
  auto supervisor = std::make_unique<RunSupervisor>(std::move(launch), ReportingCallbacks(run));
  RunSupervisor* raw = supervisor.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ActiveRun& active = runs_[run.run_id()];
    active.attempt = run.attempt();
    active.supervisor = std::move(supervisor);
  }
  raw->Start();
}

namespace {

bool HasCheckpoint(const std::string& run_dir) {
  for (const char* name : contract::kCheckpointFiles) {
    struct stat info;
    const std::string path = absl::StrCat(run_dir, "/", name);
    if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) return true;
  }
  return false;
}

}  // namespace

absl::Status Agent::CheckForkSource(const RunLaunch& launch, int64_t parent_run_id) const {
  // Not a fork, or a fork's later attempt, which resumes from its own checkpoint.
  if (launch.init_from.empty() || HasCheckpoint(launch.run_dir)) return absl::OkStatus();
  if (HasCheckpoint(launch.init_from)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "fork of run ", parent_run_id, ": no checkpoint of run ", parent_run_id, " in ", launch.init_from,
      " on this worker (a fork must run where its parent's run directory is: the same machine, or a "
      "--work_dir on a shared filesystem)"));
}

void Agent::OnRunDone(const v1::RunAttempt& run, const RunOutcome& outcome) {
  AgentLog(absl::StrCat(AttemptName(run), " ended: ", v1::RunState_Name(outcome.state), " exit ",
                        outcome.exit_code, outcome.report ? "" : " (stale, not reported)"));
  if (!outcome.report) {
    outbox_.DropAttempt(run);
    return;  // ReapFinished removes it.
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run.run_id());
    if (it != runs_.end() && it->second.attempt == run.attempt()) it->second.awaiting_delivery = true;
  }
  Report report;
  report.kind = Report::Kind::kComplete;
  report.run = run;
  *report.complete.mutable_run() = run;
  report.complete.set_outcome(outcome.state);
  report.complete.set_exit_code(outcome.exit_code);
  report.complete.set_message(ValidUtf8(outcome.message));  // It may quote the trainer's stderr.
  for (const auto& [name, value] : outcome.final_metrics)
    (*report.complete.mutable_final_metrics())[name] = value;
  outbox_.Push(std::move(report));
}

void Agent::Retire(const v1::RunAttempt& run) {
  std::unique_ptr<RunSupervisor> supervisor;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run.run_id());
    if (it == runs_.end() || it->second.attempt != run.attempt()) return;
    it->second.awaiting_delivery = false;
    // Leave and Shutdown own (and join) the supervisors from now on.
    if (lifecycle_ != Lifecycle::kServing) return;
    supervisor = std::move(it->second.supervisor);
    runs_.erase(it);
  }
  if (supervisor != nullptr) supervisor->Join();  // Its thread is finishing on_done, if not already gone.
}

void Agent::ReapFinished() {
  std::vector<std::unique_ptr<RunSupervisor>> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (it->second.supervisor->done() && !it->second.awaiting_delivery) {
        finished.push_back(std::move(it->second.supervisor));
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : finished) s->Join();
}

std::vector<v1::RunAttempt> Agent::RunningAttempts() {
  std::vector<v1::RunAttempt> attempts;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, run] : runs_) {
    // A stale attempt that is still being stopped is not ours to claim any more.
    if (run.supervisor->done() && !run.awaiting_delivery) continue;
    attempts.push_back(MakeAttempt(id, run.attempt));
  }
  return attempts;
}

void Agent::StopAttempts(const google::protobuf::RepeatedPtrField<v1::RunAttempt>& attempts,
                         StopReason reason) {
  for (const v1::RunAttempt& run : attempts) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run.run_id());
    if (it == runs_.end() || it->second.attempt != run.attempt() || it->second.supervisor->done()) continue;
    AgentLog(absl::StrCat("coordinator asks to stop ", AttemptName(run)));
    it->second.supervisor->Stop(reason);
  }
}

absl::Status Agent::Send(const std::vector<Report>& batch) {
  const Report& head = batch.front();
  switch (head.kind) {
    case Report::Kind::kStart:
      return client_->StartRun(head.run);
    case Report::Kind::kComplete:
      return client_->CompleteRun(head.complete);
    case Report::Kind::kMetric: {
      std::vector<v1::MetricReport> reports;
      for (const Report& r : batch) {
        v1::MetricReport& report = reports.emplace_back();
        *report.mutable_run() = r.run;
        *report.mutable_point() = r.point;
      }
      return client_->ReportMetrics(reports);
    }
    case Report::Kind::kLog: {
      v1::LogReport report;
      *report.mutable_run() = head.run;
      for (const Report& r : batch) *report.add_lines() = r.line;
      return client_->ReportLog(report);
    }
  }
  return absl::InternalError("unknown report kind");
}

void Agent::ReportLoop() {
  std::chrono::milliseconds backoff = kInitialBackoff;
  bool retrying = false;  // The head report was not taken: say so once, and once more when it goes out.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lifecycle_ == Lifecycle::kStopped) return;
    }
    std::vector<Report> batch = outbox_.PeekBatch(kMaxBatch, std::chrono::milliseconds(200));
    if (batch.empty()) continue;
    const Report& head = batch.front();
    const absl::Status status = Send(batch);
    const ReportFate fate = FateOf(status);
    if (fate == ReportFate::kRetry) {
      if (!retrying) {
        AgentLog(absl::StrCat("the coordinator did not take a report of ", AttemptName(head.run), " (",
                              status.ToString(), "); keeping it and the reports after it (", outbox_.size(),
                              " waiting), sending again with back-off"));
      }
      retrying = true;
      // Keep the batch: it goes out again, in order, once the coordinator takes it.
      Backoff(&backoff, /*reporter=*/true, options_.max_backoff);
      continue;
    }
    if (retrying)
      AgentLog(absl::StrCat("the coordinator takes reports again (", outbox_.size(), " waiting)"));
    retrying = false;
    backoff = kInitialBackoff;
    outbox_.Ack(batch.back().id);
    if (fate == ReportFate::kFenced) {
      // This attempt is no longer the run's current one. Stop its processes, drop its reports.
      AgentLog(absl::StrCat(AttemptName(head.run), " refused by the coordinator (", status.message(),
                            "); stopping it"));
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = runs_.find(head.run.run_id());
        if (it != runs_.end() && it->second.attempt == head.run.attempt()) {
          it->second.supervisor->Stop(StopReason::kStale);
          it->second.awaiting_delivery = false;
        }
      }
      outbox_.DropAttempt(head.run);
      continue;
    }
    if (fate == ReportFate::kRefused) {
      AgentLog(absl::StrCat("the coordinator refused a report of ", AttemptName(head.run),
                            " for good: ", status.ToString()));
    }
    if (head.kind == Report::Kind::kComplete) Retire(head.run);
  }
}

}  // namespace nmsparse::agent
