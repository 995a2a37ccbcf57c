// The runs an agent holds: taking an assignment, starting its ranks, reporting its end, and letting go.
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/unicode_text.h"
#include "contract/nmtrain_exit_codes.h"
#include "contract/rendezvous_hand_back.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "schemas/limits.h"
#include "worker/agent/agent.h"
#include "worker/agent/agent_log.h"
#include "worker/agent/data_roots.h"
#include "worker/agent/model_export_upload.h"
#include "worker/agent/run_attempt.h"

namespace nmsparse::agent {
namespace {

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

}  // namespace

void Agent::HandleAssignment(const v1::Assignment& assignment) {
  if (assignment.has_export_model()) {
    StartModelExport(assignment.export_model());
    return;
  }
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
  if (launch.nodes > 1 && launch.node_rank == 0 && !RunSupervisor::PortFree(launch.master_port)) {
    // Rank 0 could not listen there. The coordinator cannot see this node's ports: hand the attempt back (no
    // retry used); its next placement takes the range's next port.
    HandBackTakenPort(run, launch.master_port);
    return;
  }
  AgentLog(absl::StrCat("starting ", AttemptName(run), " with ", launch.ranks.size(), " rank(s) in ",
                        launch.run_dir, assignment.resume() ? " (resume)" : "",
                        launch.nodes > 1
                            ? absl::StrCat(" as node ", launch.node_rank, " of ", launch.nodes,
                                           ", meeting at ", launch.master_addr, ":", launch.master_port)
                            : ""));
  StartSupervisor(run, std::move(launch));
}

void Agent::StartModelExport(const v1::ModelExportOrder& order) {
  ModelExportJob job{options_.trainer, options_.work_dir, options_.host, 0, order};
  std::lock_guard<std::mutex> lock(mu_);
  if (Stopping()) return;  // The coordinator's wait for the upload ends when this worker's stream does.
  job.worker_id = worker_id_;
  AgentLog(absl::StrCat("exporting run ", order.run_id(), "'s model (export ", order.export_id(), ")"));
  export_threads_.emplace_back([this, job = std::move(job)] {
    absl::Status s = ExportAndUpload(job, client_.get());
    AgentLog(absl::StrCat("export ", job.order.export_id(), " of run ", job.order.run_id(), ": ",
                          s.ok() ? "sent" : s.ToString()));
  });
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
  launch.socket_ifname = options_.socket_ifname;
  if (assignment.nodes() > 1) {  // Node `node_rank` of a gang: its ranks meet the others' at node 0.
    launch.nodes = assignment.nodes();
    launch.node_rank = assignment.node_rank();
    launch.master_addr = assignment.master_addr();
    launch.master_port = static_cast<int>(assignment.master_port());
  }
  return launch;
}

void Agent::HandBackTakenPort(const v1::RunAttempt& run, int port) {
  RunOutcome outcome;
  outcome.state = v1::QUEUED;
  outcome.exit_code = contract::kRendezvousPortTaken;  // Counted by the coordinator against the range.
  outcome.message = absl::StrCat("rendezvous port ", port, " is taken on node 0 (", options_.host, ")");
  AgentLog(absl::StrCat("handing back ", AttemptName(run), ": ", outcome.message));
  OnRunDone(run, outcome);
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
  // The final metrics went ahead of it as the attempt's `final` point (the outbox keeps its order).
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
}  // namespace nmsparse::agent
