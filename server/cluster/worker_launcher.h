// How the coordinator gets workers from a cluster scheduler: it submits batch jobs that each run one
// nmworker, lists them, and cancels them. SlurmLauncher (sbatch, squeue, scancel) is the one variant today; a
// Kubernetes launcher (a Job per node pool) would be a second one behind the same interface. WorkerPool
// decides how many jobs to have; the launcher only talks to the scheduler.
#ifndef NMSPARSE_SERVER_CLUSTER_WORKER_LAUNCHER_H_
#define NMSPARSE_SERVER_CLUSTER_WORKER_LAUNCHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse::server {

enum class JobPhase { kPending, kRunning, kEnded };

// One job as the scheduler reports it.
struct LaunchedJob {
  std::string id;  // The scheduler's job id ("123"); the pool shows it as "<kind>:<id>".
  JobPhase phase = JobPhase::kPending;
  std::string state;  // The scheduler's word (PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, NODE_FAIL, ...).
  std::string node;
  int64_t time_left_s = -1;  // -1: unknown or unlimited.
  uint32_t nodes = 1;        // A gang job has one nmworker on each of its nodes.
  std::string reason;        // Why pending, or how it ended.
};

class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  // "slurm": the prefix of job ids and of `nmworker --job`.
  virtual std::string Kind() const = 0;
  // Worker slots one job offers (GPUs, or CPU slots on CPU-only partitions).
  virtual uint32_t SlotsPerJob() const = 0;
  virtual uint32_t MaxJobs() const = 0;
  // How often the pool looks at the scheduler and the queue.
  virtual int64_t PollIntervalMs() const = 0;
  // Submits one worker job of `nodes` nodes, one nmworker on each (all of them one gang's workers when
  // nodes > 1); returns its id.
  virtual absl::StatusOr<std::string> Submit(uint32_t nodes) = 0;
  // The launcher's jobs the scheduler still knows, ended ones included while it remembers them.
  virtual absl::StatusOr<std::vector<LaunchedJob>> List() = 0;
  virtual absl::Status Cancel(const std::string& id) = 0;
  // Where a job's own output goes (named in failure reports).
  virtual std::string JobLogPath(const std::string& id) const = 0;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_WORKER_LAUNCHER_H_
