#include "server/scheduling/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "server/scheduling/placement.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/status_macros.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

// The free slots of every live worker with an open Assignments stream.
absl::StatusOr<std::vector<NodeFree>> FreeNodes(Database* db, const AssignmentHub& hub) {
  NM_ASSIGN_OR_RETURN(std::vector<WorkerRecord> workers, ListWorkerRecords(db));
  NM_ASSIGN_OR_RETURN(auto held, HeldSlots(db));
  std::map<int64_t, std::vector<uint32_t>> held_by_worker;
  for (auto& [worker, slots] : held) {
    auto& h = held_by_worker[worker];
    h.insert(h.end(), slots.begin(), slots.end());
  }
  std::vector<NodeFree> nodes;
  for (const WorkerRecord& w : workers) {
    if (!w.worker.alive() || !hub.IsConnected(w.worker.id())) continue;
    std::vector<uint32_t> all;
    for (const v1::Slot& s : w.worker.slots()) all.push_back(s.index());
    NodeFree n{w.worker.id(), FreeSlots(std::move(all), held_by_worker[w.worker.id()])};
    if (!n.free_slots.empty()) nodes.push_back(std::move(n));
  }
  return nodes;
}

// Walks the queue in order, placing what fits, until no slot is left.
absl::StatusOr<std::vector<Placement>> Plan(Database* db, std::vector<NodeFree> nodes) {
  size_t free_total = 0, max_free = 0;
  for (const NodeFree& n : nodes) {
    free_total += n.free_slots.size();
    max_free = std::max(max_free, n.free_slots.size());
  }
  std::vector<Placement> plan;
  if (free_total == 0) return plan;
  // A run whose twin (same sweep, same content hash: a dense run in another N:M column) trains waits, and
  // reuses its results when it succeeds (CompleteAttempt).
  NM_ASSIGN_OR_RETURN(std::set<std::string> training, ActiveRunKeys(db));
  // Runs needing more slots than any node has free cannot be placed in this pass: SQLite skips them.
  NM_RETURN_IF_ERROR(ScanQueue(db, static_cast<uint32_t>(max_free), [&](const QueuedRun& q) {
    const std::string key = RunKey(q.sweep_id, q.content_hash);
    if (training.count(key) > 0) return true;
    std::optional<Placement> p = PlaceGang(&nodes, q.run_id, q.gpus);
    if (p) {
      free_total -= p->slots.size();
      plan.push_back(std::move(*p));
      training.insert(key);
    }
    return free_total > 0;
  }));
  return plan;
}

}  // namespace

absl::StatusOr<int> Scheduler::RunPass() {
  absl::MutexLock pass(&pass_mu_);
  std::vector<std::pair<int64_t, v1::Assignment>> made;
  NM_RETURN_IF_ERROR(store_->Write([&](Database* db) -> absl::Status {
    made.clear();
    NM_ASSIGN_OR_RETURN(std::vector<NodeFree> nodes, FreeNodes(db, *hub_));
    if (nodes.empty()) return absl::OkStatus();
    NM_ASSIGN_OR_RETURN(std::vector<Placement> plan, Plan(db, std::move(nodes)));
    int64_t now = NowMs();
    for (const Placement& p : plan) {
      NM_ASSIGN_OR_RETURN(v1::Assignment a, AssignRun(db, p.run_id, p.worker_id, p.slots, now));
      made.emplace_back(p.worker_id, std::move(a));
    }
    return absl::OkStatus();
  }));
  // A push that finds the stream gone leaves the run ASSIGNED: it is re-sent when the worker reconnects, or
  // requeued when its lease runs out.
  for (const auto& [worker, a] : made) hub_->Push(worker, a);
  return static_cast<int>(made.size());
}

void Scheduler::Start() {
  loop_.Start(interval_, [this] {
    absl::StatusOr<int> placed = RunPass();
    if (!placed.ok()) {
      std::fprintf(stderr, "nmserver: scheduling pass failed: %s\n", placed.status().ToString().c_str());
    }
  });
}

void Scheduler::Stop() { loop_.Stop(); }

void Scheduler::Kick() { loop_.Wake(); }

}  // namespace nmsparse::server
