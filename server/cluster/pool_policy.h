// How many worker jobs the queue asks for (pure; WorkerPool applies it). Queued runs, in queue order, are
// packed first into the free slots of live workers, then into the jobs that are starting (pending, or
// running before their worker registered), then into new jobs of `slots_per_job` slots a node, first fit. A
// run of K > 1 nodes (a gang) takes K different workers' slots among those, or else a new K-node job of its
// own: one allocation whose K workers form its gang. max_jobs caps the workers: a K-node job counts K. New
// jobs are submitted in queue order while they fit under max_jobs; starting jobs that received no run are
// surplus.
#ifndef NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_
#define NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmsparse::server {

struct PoolDemand {
  uint32_t slots_per_job = 1;           // On each node of a job.
  uint32_t max_jobs = 1;                // Workers (nodes of jobs) pending or running.
  std::vector<uint32_t> queued_slots;   // Slots each queued run needs on each of its nodes, in queue order.
  std::vector<uint32_t> queued_nodes;   // Nodes each queued run needs (1 where left out).
  std::vector<uint32_t> free_slots;     // Free slots of each live worker.
  std::vector<uint32_t> starting_jobs;  // The nodes of each job whose workers have not registered yet.
  uint32_t active_jobs = 0;             // Nodes of the jobs not ended (pending or running).
};

struct PoolPlan {
  uint32_t submit = 0;                 // New jobs to submit now...
  std::vector<uint32_t> submit_nodes;  // ...of these nodes each, in this order.
  uint32_t surplus_starting = 0;       // Starting jobs no queued run needs...
  std::vector<size_t> surplus_jobs;    // ...as indices into PoolDemand::starting_jobs.
  uint32_t target_jobs = 0;            // Active nodes once the plan is applied.
  uint32_t runs_too_large =
      0;  // Queued runs needing more slots than a job's node offers (and no worker has free).
  uint32_t runs_too_wide = 0;  // Queued runs needing more nodes than max_jobs allows.
  uint32_t runs_past_max = 0;  // Queued runs that would need jobs beyond max_jobs.
};

PoolPlan PlanPool(const PoolDemand& demand);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_CLUSTER_POOL_POLICY_H_
