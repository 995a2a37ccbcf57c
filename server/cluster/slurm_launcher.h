// The Slurm variant of WorkerLauncher: each worker job is `sbatch --wrap 'exec nmworker ...'` with the gres,
// partition, account, time limit and work directory of the `slurm:` config, and `--signal=B:USR1@S` so that
// nmworker hands its runs back before the time limit; squeue (every state, this user, the job name) lists
// them and scancel cancels them. No SSH: Slurm starts and stops everything on the nodes.
#ifndef NMSPARSE_SERVER_CLUSTER_SLURM_LAUNCHER_H_
#define NMSPARSE_SERVER_CLUSTER_SLURM_LAUNCHER_H_

#include <string>
#include <vector>

#include "server/cluster/slurm_config.h"
#include "server/cluster/worker_launcher.h"

namespace nmsparse::server {

// The sbatch command line for one worker job of `nodes` nodes whose nmworkers dial `coordinator`. One node:
// the batch shell execs nmworker. More: `--nodes=K --ntasks-per-node=1` and the batch shell execs
// `srun nmworker`, one nmworker per node, all declaring the pool's work_dir as their shared storage, so that
// they can form one gang.
std::vector<std::string> SbatchCommand(const SlurmConfig& config, const std::string& coordinator,
                                       uint32_t nodes = 1);
// Lines of `squeue -h -o '%i|%T|%N|%L|%r|%D'` as jobs (the node count may be left out); lines it cannot read
// are skipped.
std::vector<LaunchedJob> ParseSqueue(const std::string& text);
// squeue's %L ("1-02:03:04", "5:00", "UNLIMITED") in seconds; -1 when not a duration.
int64_t ParseSlurmDuration(const std::string& text);

class SlurmLauncher : public WorkerLauncher {
 public:
  SlurmLauncher(SlurmConfig config, std::string coordinator)
      : config_(std::move(config)), coordinator_(std::move(coordinator)) {}

  std::string Kind() const override { return "slurm"; }
  uint32_t SlotsPerJob() const override;
  uint32_t MaxJobs() const override { return config_.max_jobs; }
  int64_t PollIntervalMs() const override { return config_.poll_interval_s * 1000; }
  absl::StatusOr<std::string> Submit(uint32_t nodes) override;
  absl::StatusOr<std::vector<LaunchedJob>> List() override;
  absl::Status Cancel(const std::string& id) override;
  std::string JobLogPath(const std::string& id) const override;

 private:
  std::string Program(const std::string& name) const;
  const SlurmConfig config_;
  const std::string coordinator_;
};

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_SLURM_LAUNCHER_H_
