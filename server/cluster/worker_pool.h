// The coordinator's worker pool: every poll interval (and soon after a submission) it looks at the launcher's
// jobs and the queue, submits the jobs the queued demand asks for (PlanPool), cancels pending jobs no run
// needs any more, and reports what it sees: jobs that ended before their worker registered (failed starts,
// with their output file), nodes that failed, workers silent inside running jobs. After three failed starts
// in a row it pauses submissions (1 min, doubling up to 15 min). Idle workers leave by themselves
// (nmworker --idle_exit_ms), which ends their jobs: the pool never kills a job whose worker is up.
#ifndef NMSPARSE_SERVER_CLUSTER_WORKER_POOL_H_
#define NMSPARSE_SERVER_CLUSTER_WORKER_POOL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/background_loop.h"
#include "server/cluster/pool_policy.h"
#include "server/cluster/worker_launcher.h"
#include "server/store/store.h"

namespace nmsparse::server {

class WorkerPool {
 public:
  WorkerPool(Store* store, std::shared_ptr<WorkerLauncher> launcher)
      : store_(store), launcher_(std::move(launcher)) {}
  ~WorkerPool() { Stop(); }

  void Start();
  void Stop();
  // Asks for a look soon (a sweep was submitted).
  void Wake() { loop_.Wake(); }
  // One look now, on the caller's thread.
  void Tick(int64_t now_ms);
  v1::ClusterStatus Status();

 private:
  struct Tracked {
    LaunchedJob job;
    int64_t submitted_at_ms = 0;
    int64_t worker_id = 0;
    bool ended_reported = false;
    bool silence_reported = false;
  };
  struct Queue {
    PoolDemand demand;
    std::map<std::string, v1::Worker> workers_by_job;     // "slurm:<id>" -> its newest worker.
    std::map<std::string, uint32_t> live_workers_by_job;  // A gang job's nodes each have one.
  };

  absl::StatusOr<Queue> ReadQueue();
  void Merge(const std::vector<LaunchedJob>& listed);
  void Watch(const Queue& queue, int64_t now_ms);
  // `starting` names the jobs of PoolDemand::starting_jobs, in the same order.
  void Apply(const PoolPlan& plan, const std::vector<std::string>& starting, int64_t now_ms);
  void Describe(const Queue& queue, const PoolPlan& plan, int64_t now_ms);
  std::string Name(const std::string& id) const { return launcher_->Kind() + ":" + id; }
  void Event(const std::string& text);

  Store* store_;
  std::shared_ptr<WorkerLauncher> launcher_;
  BackgroundLoop loop_;
  absl::Mutex tick_mu_;  // Serialises ticks; guards the fields below.
  std::map<std::string, Tracked> jobs_;
  int failed_starts_in_a_row_ = 0;
  int pauses_ = 0;
  int64_t paused_until_ms_ = 0;
  std::string last_list_error_;
  absl::Mutex status_mu_;
  v1::ClusterStatus status_ ABSL_GUARDED_BY(status_mu_);
  std::deque<std::string> events_ ABSL_GUARDED_BY(status_mu_);
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_WORKER_POOL_H_
