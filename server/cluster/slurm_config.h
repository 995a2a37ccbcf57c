// The `slurm:` section of nmserver's config file (--config): what the coordinator's worker jobs ask Slurm for
// and how nmworker runs inside them. Each key is declared once, in kSlurmKeys (slurm_config.cc), with its
// default and meaning; docs/cluster.md lists them.
#ifndef NMSPARSE_SERVER_CLUSTER_SLURM_CONFIG_H_
#define NMSPARSE_SERVER_CLUSTER_SLURM_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nmsparse::server {

struct SlurmConfig {
  std::string nmworker;          // The nmworker binary, as the compute nodes see it.
  std::string work_dir;          // nmworker --work_dir and the job's working directory (a shared filesystem).
  std::string coordinator;       // The address workers dial; default: nmserver's listen address.
  std::string partition;         // sbatch --partition (empty: the cluster's default).
  std::string account;           // sbatch --account.
  std::string time = "1:00:00";  // sbatch --time.
  uint32_t gpus_per_job = 1;     // sbatch --gres=gpu:N and nmworker --gpus=N; 0 for CPU-only partitions.
  uint32_t cpu_slots_per_job = 1;        // nmworker --cpu-slots when gpus_per_job is 0.
  uint32_t cpus_per_job = 0;             // sbatch --cpus-per-task (0: leave it to Slurm).
  uint32_t max_jobs = 4;                 // At most this many worker jobs pending or running.
  int64_t idle_exit_s = 120;             // A worker with no run for this long leaves and its job ends.
  int64_t signal_before_end_s = 120;     // Slurm signals the worker this long before the time limit.
  int64_t poll_interval_s = 10;          // How often the pool looks at squeue and the queue.
  std::string job_name = "nmworker";     // sbatch --job-name; squeue finds the pool's jobs by it.
  std::string log_dir;                   // Job output files; default <work_dir>/slurm-logs.
  std::vector<std::string> sbatch_args;  // More sbatch options, passed as given.
  std::vector<std::string> worker_args;  // More nmworker flags (e.g. --trainer=PATH).
  std::string slurm_bin_dir;             // Where sbatch, squeue, scancel are (empty: PATH).
};

// Reads `path`. Returns nullopt when the file has no `slurm:` section (workers are started by hand);
// INVALID_ARGUMENT naming the file, the key and the value for anything wrong in it.
absl::StatusOr<std::optional<SlurmConfig>> LoadSlurmConfig(const std::string& path);
// The same from YAML text; `origin` names it in errors.
absl::StatusOr<std::optional<SlurmConfig>> ParseSlurmConfig(const std::string& yaml,
                                                            const std::string& origin);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_SLURM_CONFIG_H_
