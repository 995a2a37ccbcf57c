#include "server/cluster/pool_policy.h"

#include <algorithm>

namespace nmsparse::server {
namespace {

struct Bin {
  uint32_t free;
  bool starting;  // A starting job's slots: a job no run lands in is not needed.
  uint32_t runs = 0;
};

// First bin that fits `need`, or nullptr.
Bin* FirstFit(std::vector<Bin>* bins, uint32_t need) {
  for (Bin& b : *bins) {
    if (b.free >= need) return &b;
  }
  return nullptr;
}

}  // namespace

PoolPlan PlanPool(const PoolDemand& d) {
  std::vector<Bin> bins;
  for (uint32_t free : d.free_slots) bins.push_back({free, false});
  for (uint32_t i = 0; i < d.starting_jobs; ++i) bins.push_back({d.slots_per_job, true});
  PoolPlan plan;
  uint32_t new_jobs = 0;
  for (uint32_t need : d.queued_slots) {
    Bin* bin = FirstFit(&bins, need);
    if (bin == nullptr) {
      if (need > d.slots_per_job) {
        ++plan.runs_too_large;
        continue;
      }
      bins.push_back({d.slots_per_job, false});
      bin = &bins.back();
      ++new_jobs;
    }
    bin->free -= need;
    ++bin->runs;
  }
  for (const Bin& b : bins) plan.surplus_starting += b.starting && b.runs == 0;
  const uint32_t room = d.max_jobs > d.active_jobs ? d.max_jobs - d.active_jobs : 0;
  plan.submit = std::min(new_jobs, room);
  // The runs packed into the new jobs that cannot be submitted wait for a slot to free up.
  const size_t first_unsubmitted = d.free_slots.size() + d.starting_jobs + plan.submit;
  for (size_t i = first_unsubmitted; i < bins.size(); ++i) plan.runs_past_max += bins[i].runs;
  plan.target_jobs = d.active_jobs + plan.submit;
  return plan;
}

}  // namespace nmsparse::server
