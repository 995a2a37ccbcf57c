#include "server/cluster/worker_pool.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

constexpr size_t kMaxEvents = 50;
constexpr size_t kMaxEndedShown = 20;
constexpr int kFailedStartsBeforePause = 3;
constexpr int64_t kFirstPauseMs = 60 * 1000;
constexpr int64_t kMaxPauseMs = 15 * 60 * 1000;
constexpr int64_t kSilenceReportMs = 30 * 1000;

// Slurm's pending reasons in words (the reason itself is shown too).
std::string PendingMeaning(const std::string& reason) {
  if (reason == "Resources") return "no node in the partition has room (partition full)";
  if (reason == "Priority") return "jobs of higher priority go first";
  if (reason == "ReqNodeNotAvail" || reason.rfind("ReqNodeNotAvail", 0) == 0)
    return "the nodes it may use are down or reserved";
  if (reason == "PartitionDown" || reason == "PartitionInactive") return "the partition is down";
  if (reason.find("Limit") != std::string::npos) return "an account or QOS limit holds it";
  if (reason.empty()) return "not scheduled yet";
  return "";
}

bool NodeFailed(const std::string& state) { return state == "NODE_FAIL" || state == "BOOT_FAIL"; }

// "1 run waits", "2 runs wait".
std::string Counted(uint32_t n, const std::string& noun, const std::string& verb) {
  return n == 1 ? absl::StrCat("1 ", noun, " ", verb, "s") : absl::StrCat(n, " ", noun, "s ", verb);
}

}  // namespace

void WorkerPool::Start() {
  loop_.Start(absl::Milliseconds(launcher_->PollIntervalMs()), [this] { Tick(NowMs()); });
}

void WorkerPool::Stop() { loop_.Stop(); }

void WorkerPool::Event(const std::string& text) {
  std::fprintf(stderr, "nmserver: %s pool: %s\n", launcher_->Kind().c_str(), text.c_str());
  absl::MutexLock lock(&status_mu_);
  events_.push_back(absl::StrCat(absl::FormatTime("%H:%M:%S ", absl::Now(), absl::LocalTimeZone()), text));
  while (events_.size() > kMaxEvents) events_.pop_front();
}

v1::ClusterStatus WorkerPool::Status() {
  absl::MutexLock lock(&status_mu_);
  v1::ClusterStatus out = status_;
  for (const std::string& e : events_) out.add_events(e);
  return out;
}

absl::StatusOr<WorkerPool::Queue> WorkerPool::ReadQueue() {
  Queue q;
  NM_RETURN_IF_ERROR(store_->Read([&](Database* db) -> absl::Status {
    NM_ASSIGN_OR_RETURN(std::vector<QueuedRun> queued, QueuedInOrder(db));
    for (const QueuedRun& r : queued) {
      q.demand.queued_slots.push_back(r.gpus);
      q.demand.queued_nodes.push_back(r.nodes);
    }
    NM_ASSIGN_OR_RETURN(std::vector<v1::Worker> workers, WorkersWithRuns(db));
    for (v1::Worker& w : workers) {
      if (w.alive() && w.free_slots() > 0) q.demand.free_slots.push_back(w.free_slots());
      if (w.job().empty()) continue;
      if (w.alive()) ++q.live_workers_by_job[w.job()];
      auto it = q.workers_by_job.find(w.job());
      if (it == q.workers_by_job.end() || it->second.id() < w.id()) q.workers_by_job[w.job()] = std::move(w);
    }
    return absl::OkStatus();
  }));
  return q;
}

void WorkerPool::Merge(const std::vector<LaunchedJob>& listed) {
  std::map<std::string, const LaunchedJob*> seen;
  for (const LaunchedJob& j : listed) seen[j.id] = &j;
  for (const LaunchedJob& j : listed) {
    auto [it, adopted] = jobs_.try_emplace(j.id);  // A job of ours from before a restart is adopted...
    if (adopted && j.phase == JobPhase::kEnded) it->second.ended_reported = true;  // ...ended ones quietly.
    it->second.job = j;
  }
  for (auto& [id, t] : jobs_) {
    if (seen.count(id) || t.job.phase == JobPhase::kEnded) continue;
    t.job.phase = JobPhase::kEnded;  // The scheduler forgot it (purged, or its controller restarted).
    t.job.state = "GONE";
    t.job.reason = "no longer listed by the scheduler";
    t.job.time_left_s = -1;
  }
}

// Failed starts, failed nodes, silent workers: each reported once.
void WorkerPool::Watch(const Queue& queue, int64_t now_ms) {
  for (auto& [id, t] : jobs_) {
    auto w = queue.workers_by_job.find(Name(id));
    if (w != queue.workers_by_job.end() && t.worker_id != w->second.id()) {
      t.worker_id = w->second.id();
      failed_starts_in_a_row_ = 0;
    }
    if (t.job.phase == JobPhase::kEnded && !t.ended_reported) {
      t.ended_reported = true;
      const std::string how =
          absl::StrCat(t.job.state, t.job.reason.empty() ? "" : " (" + t.job.reason + ")");
      if (t.worker_id == 0) {
        ++failed_starts_in_a_row_;
        Event(absl::StrCat("job ", Name(id), " ended ", how,
                           " before its worker registered: a failed start; ",
                           "its output: ", launcher_->JobLogPath(id)));
      } else if (NodeFailed(t.job.state)) {
        Event(absl::StrCat("node ", t.job.node, " failed under job ", Name(id), " (worker ", t.worker_id,
                           "); its runs go back to the queue when the worker's lease runs out"));
      } else {
        Event(absl::StrCat("job ", Name(id), " of worker ", t.worker_id, " ended ", how));
      }
    }
    // Slurm holds a job whose launch failed on its node ("launch failed requeued held"): it would wait
    // forever.
    if (t.job.phase == JobPhase::kPending && t.job.reason.find("launch failed") != std::string::npos &&
        !t.ended_reported) {
      t.ended_reported = true;
      ++failed_starts_in_a_row_;
      const absl::Status cancelled = launcher_->Cancel(id);
      Event(absl::StrCat("job ", Name(id), " could not be launched on its node (", t.job.reason,
                         "): a failed start; ", cancelled.ok() ? "cancelled it" : cancelled.ToString(),
                         "; see the node's slurmd log"));
    }
    if (t.job.phase == JobPhase::kRunning && w != queue.workers_by_job.end() && !w->second.alive() &&
        !t.silence_reported && now_ms - w->second.last_heartbeat_ms() > kSilenceReportMs) {
      t.silence_reported = true;
      Event(absl::StrCat("job ", Name(id), " is still RUNNING on ", t.job.node, " but its worker ",
                         t.worker_id, " has been silent for ",
                         (now_ms - w->second.last_heartbeat_ms()) / 1000, " s: node or network trouble?"));
    }
  }
  if (failed_starts_in_a_row_ >= kFailedStartsBeforePause && paused_until_ms_ <= now_ms) {
    const int64_t pause = std::min(kMaxPauseMs, kFirstPauseMs << std::min(pauses_, 4));
    ++pauses_;
    paused_until_ms_ = now_ms + pause;
    failed_starts_in_a_row_ = 0;
    Event(absl::StrCat(kFailedStartsBeforePause, " jobs in a row ended before their worker registered: ",
                       "submissions paused for ", pause / 1000, " s"));
  }
}

void WorkerPool::Apply(const PoolPlan& plan, const std::vector<std::string>& starting, int64_t now_ms) {
  const bool paused = now_ms < paused_until_ms_;
  for (uint32_t i = 0; i < plan.submit && !paused; ++i) {
    const uint32_t nodes = plan.submit_nodes[i];
    absl::StatusOr<std::string> id = launcher_->Submit(nodes);
    if (!id.ok()) {
      ++failed_starts_in_a_row_;
      Event(absl::StrCat("submitting a worker job failed: ", id.status().message()));
      break;
    }
    Tracked& t = jobs_[*id];
    t.job.id = *id;
    t.job.state = "PENDING";
    t.job.nodes = nodes;
    t.submitted_at_ms = now_ms;
    Event(absl::StrCat("submitted job ", Name(*id), nodes > 1 ? absl::StrCat(" of ", nodes, " nodes") : "",
                       " (", plan.target_jobs, " wanted)"));
  }
  // Pending jobs no queued run needs.
  for (size_t index : plan.surplus_jobs) {
    auto it = jobs_.find(starting[index]);
    if (it == jobs_.end()) continue;
    Tracked& t = it->second;
    if (t.job.phase != JobPhase::kPending || t.worker_id != 0) continue;
    absl::Status s = launcher_->Cancel(it->first);
    if (s.ok()) {
      t.job.phase = JobPhase::kEnded;
      t.job.state = "CANCELLED";
      t.job.reason = "no queued run needs it";
      t.ended_reported = true;
      t.worker_id = -1;  // Not a failed start.
      Event(absl::StrCat("cancelled pending job ", Name(it->first), ": no queued run needs it"));
    } else {
      Event(absl::StrCat("cancelling job ", Name(it->first), " failed: ", s.message()));
    }
  }
}

void WorkerPool::Describe(const Queue& queue, const PoolPlan& plan, int64_t now_ms) {
  v1::ClusterStatus s;
  s.set_launcher(launcher_->Kind());
  s.set_max_jobs(launcher_->MaxJobs());
  s.set_slots_per_job(launcher_->SlotsPerJob());
  s.set_target_jobs(plan.target_jobs);
  s.set_queued_runs(static_cast<uint32_t>(queue.demand.queued_slots.size()));
  std::vector<v1::PoolJob> ended;
  for (const auto& [id, t] : jobs_) {
    v1::PoolJob j;
    j.set_id(Name(id));
    j.set_state(t.job.state);
    j.set_node(t.job.node);
    j.set_time_left_s(t.job.time_left_s);
    j.set_reason(t.job.reason);
    j.set_worker_id(std::max<int64_t>(t.worker_id, 0));
    j.set_submitted_at_ms(t.submitted_at_ms);
    if (t.job.phase == JobPhase::kEnded) {
      ended.push_back(std::move(j));
      continue;
    }
    *s.add_jobs() = j;
    if (s.queued_runs() == 0 || t.worker_id > 0) continue;
    if (t.job.phase == JobPhase::kPending) {
      const std::string meaning = PendingMeaning(t.job.reason);
      s.add_waiting(absl::StrCat("job ", Name(id), " is pending",
                                 t.job.reason.empty() ? "" : ": " + t.job.reason,
                                 meaning.empty() ? "" : " (" + meaning + ")"));
    } else {
      s.add_waiting(
          absl::StrCat("job ", Name(id), " runs on ", t.job.node, "; its worker has not registered yet"));
    }
  }
  const size_t first = ended.size() > kMaxEndedShown ? ended.size() - kMaxEndedShown : 0;
  for (size_t i = first; i < ended.size(); ++i) *s.add_jobs() = std::move(ended[i]);
  if (plan.runs_too_large > 0) {
    s.add_waiting(absl::StrCat(Counted(plan.runs_too_large, "run", "need"), " more than the ",
                               launcher_->SlotsPerJob(), " slots a worker job offers (slurm.gpus_per_job)"));
  }
  if (plan.runs_too_wide > 0) {
    s.add_waiting(absl::StrCat(Counted(plan.runs_too_wide, "run", "need"), " more nodes than max_jobs (",
                               launcher_->MaxJobs(), ") allows: a K-node run is one job of K nodes"));
  }
  if (plan.runs_past_max > 0) {
    s.add_waiting(absl::StrCat(Counted(plan.runs_past_max, "run", "wait"),
                               " for a slot: the pool is at max_jobs (", launcher_->MaxJobs(), ")"));
  }
  if (now_ms < paused_until_ms_ && s.queued_runs() > 0) {
    s.add_waiting(absl::StrCat("submissions are paused for ", (paused_until_ms_ - now_ms + 999) / 1000,
                               " s after failed job starts (see events)"));
  }
  if (!last_list_error_.empty()) s.add_waiting("cannot list the jobs: " + last_list_error_);
  absl::MutexLock lock(&status_mu_);
  status_ = std::move(s);
}

void WorkerPool::Tick(int64_t now_ms) {
  absl::MutexLock tick(&tick_mu_);
  absl::StatusOr<std::vector<LaunchedJob>> listed = launcher_->List();
  if (!listed.ok()) {
    const std::string error(listed.status().message());
    if (error != last_list_error_) Event(absl::StrCat("listing the jobs failed: ", error));
    last_list_error_ = error;
    return;  // Without the jobs, submitting could double the pool.
  }
  last_list_error_.clear();
  Merge(*listed);
  absl::StatusOr<Queue> queue = ReadQueue();
  if (!queue.ok()) {
    std::fprintf(stderr, "nmserver: pool: reading the queue failed: %s\n", queue.status().ToString().c_str());
    return;
  }
  Watch(*queue, now_ms);
  std::vector<std::string> starting;  // Jobs with nodes whose worker has not registered yet.
  for (const auto& [id, t] : jobs_) {
    if (t.job.phase == JobPhase::kEnded) continue;
    const uint32_t nodes = std::max<uint32_t>(t.job.nodes, 1);
    queue->demand.active_jobs += nodes;
    const auto live = queue->live_workers_by_job.find(Name(id));
    const uint32_t registered = live == queue->live_workers_by_job.end() ? 0 : live->second;
    if (t.worker_id == 0 || (nodes > 1 && registered < nodes)) {  // A gang job's nodes register one by one.
      queue->demand.starting_jobs.push_back(t.worker_id == 0 ? nodes : nodes - registered);
      starting.push_back(id);
    }
  }
  queue->demand.slots_per_job = launcher_->SlotsPerJob();
  queue->demand.max_jobs = launcher_->MaxJobs();
  PoolPlan plan = PlanPool(queue->demand);
  Apply(plan, starting, now_ms);
  Describe(*queue, plan, now_ms);
}

}  // namespace nmsparse::server
