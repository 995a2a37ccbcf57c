#include "server/cluster/pool_policy.h"

#include <algorithm>

namespace nmsparse::server {
namespace {

constexpr int kLive = -1;  // A live worker's bin, not a job's.

struct Bin {
  uint32_t free;
  int job;  // Index of its starting or new job (starting ones first), or kLive.
  uint32_t runs = 0;
};

// `nodes` different bins with `need` free each, first fit, or empty.
std::vector<Bin*> FirstFit(std::vector<Bin>* bins, uint32_t need, uint32_t nodes) {
  std::vector<Bin*> fit;
  for (Bin& b : *bins) {
    if (b.free >= need) fit.push_back(&b);
    if (fit.size() == nodes) return fit;
  }
  return {};
}

}  // namespace

PoolPlan PlanPool(const PoolDemand& d) {
  std::vector<Bin> bins;
  for (uint32_t free : d.free_slots) bins.push_back({free, kLive});
  const int starting = static_cast<int>(d.starting_jobs.size());
  for (int j = 0; j < starting; ++j) {
    for (uint32_t n = 0; n < std::max<uint32_t>(d.starting_jobs[j], 1); ++n)
      bins.push_back({d.slots_per_job, j});
  }
  PoolPlan plan;
  std::vector<uint32_t> new_jobs;  // Nodes of each new job.
  std::vector<int> placed_in_new;  // For each run placed in new jobs: the newest of them.
  for (size_t i = 0; i < d.queued_slots.size(); ++i) {
    const uint32_t need = d.queued_slots[i];
    const uint32_t nodes = std::max<uint32_t>(i < d.queued_nodes.size() ? d.queued_nodes[i] : 1, 1);
    std::vector<Bin*> fit = FirstFit(&bins, need, nodes);
    if (fit.empty()) {
      if (need > d.slots_per_job) {
        ++plan.runs_too_large;
        continue;
      }
      if (nodes > d.max_jobs) {
        ++plan.runs_too_wide;
        continue;
      }
      const int job = starting + static_cast<int>(new_jobs.size());
      new_jobs.push_back(nodes);
      for (uint32_t n = 0; n < nodes; ++n) bins.push_back({d.slots_per_job, job});
      fit.clear();  // This run's own job, not free room elsewhere.
      for (size_t b = bins.size() - nodes; b < bins.size(); ++b) fit.push_back(&bins[b]);
    }
    int newest = kLive;  // The last new job the run lands in: it waits for that one's submission.
    for (Bin* b : fit) {
      b->free -= need;
      ++b->runs;
      if (b->job >= starting) newest = std::max(newest, b->job - starting);
    }
    if (newest != kLive) placed_in_new.push_back(newest);
  }
  std::vector<bool> used(starting, false);
  for (const Bin& b : bins) {
    if (b.job != kLive && b.job < starting && b.runs > 0) used[b.job] = true;
  }
  for (int j = 0; j < starting; ++j) {
    if (!used[j]) plan.surplus_jobs.push_back(j);
  }
  plan.surplus_starting = static_cast<uint32_t>(plan.surplus_jobs.size());
  uint32_t room = d.max_jobs > d.active_jobs ? d.max_jobs - d.active_jobs : 0;
  for (uint32_t nodes : new_jobs) {  // In queue order: no job jumps ahead of one that does not fit.
    if (nodes > room) break;
    ++plan.submit;
    plan.submit_nodes.push_back(nodes);
    room -= nodes;
    plan.target_jobs += nodes;
  }
  for (int job : placed_in_new) plan.runs_past_max += job >= static_cast<int>(plan.submit);
  plan.target_jobs += d.active_jobs;
  return plan;
}

}  // namespace nmsparse::server
