// How many worker jobs the queue asks for (pure; WorkerPool applies it). Queued runs, in queue order, are
// packed first into the free slots of live workers, then into the jobs that are starting (pending, or
// running before their worker registered), then into new jobs of `slots_per_job` slots each, first fit. New
// jobs are capped by max_jobs; starting jobs that received no run are surplus.
#ifndef NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_
#define NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_

#include <cstdint>
#include <vector>

namespace nmsparse::server {

struct PoolDemand {
  uint32_t slots_per_job = 1;
  uint32_t max_jobs = 1;
  std::vector<uint32_t> queued_slots;  // Slots each queued run needs, in queue order.
  std::vector<uint32_t> free_slots;    // Free slots of each live worker.
  uint32_t starting_jobs = 0;          // Jobs whose worker has not registered yet.
  uint32_t active_jobs = 0;            // Jobs not ended (pending or running).
};

struct PoolPlan {
  uint32_t submit = 0;            // New jobs to submit now.
  uint32_t surplus_starting = 0;  // Starting jobs no queued run needs.
  uint32_t target_jobs = 0;       // Active jobs once the plan is applied.
  uint32_t runs_too_large = 0;  // Queued runs needing more slots than a job offers (and no worker has free).
  uint32_t runs_past_max = 0;   // Queued runs that would need jobs beyond max_jobs.
};

PoolPlan PlanPool(const PoolDemand& demand);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_
