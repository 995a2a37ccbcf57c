#include "server/scheduling/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "contract/rank_environment.h"
#include "server/scheduling/gang_placement.h"
#include "server/scheduling/placement.h"
#include "server/store/clock.h"
#include "server/store/run_table.h"
#include "server/store/run_transitions.h"
#include "server/store/worker_table.h"

namespace nmsparse::server {
namespace {

// Every live worker with an open Assignments stream, with its free slots.
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
    NodeFree n;
    n.worker_id = w.worker.id();
    n.free_slots = FreeSlots(std::move(all), held_by_worker[w.worker.id()]);
    n.total_slots = static_cast<uint32_t>(w.worker.slots_size());
    n.storage = w.worker.storage();
    n.kind = w.worker.slots().empty() || w.worker.slots(0).kind() != v1::Slot::GPU ? kCpuSlot : kGpuSlot;
    n.addr = w.worker.advertise_addr();
    n.loopback = contract::IsLoopbackAddress(n.addr);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// One run's placement: a single node, or every node of a gang (node 0 first).
struct Planned {
  QueuedRun run;
  GangPlacement nodes;
};

// Walks the queue in order, placing what fits; a multi-node run that does not fit reserves its workers
// (gang_placement.h).
absl::StatusOr<std::vector<Planned>> Plan(Database* db, std::vector<NodeFree> nodes) {
  uint32_t max_total = 0;
  for (const NodeFree& n : nodes) max_total = std::max(max_total, n.total_slots);
  std::vector<Planned> plan;
  // A run whose twin (same sweep, same content hash: a dense run in another N:M column) trains waits, and
  // reuses its results when it succeeds (CompleteAttempt).
  NM_ASSIGN_OR_RETURN(std::set<std::string> training, ActiveRunKeys(db));
  // Runs needing more slots than any node has cannot be placed: SQLite skips them.
  NM_RETURN_IF_ERROR(ScanQueue(db, max_total, [&](const QueuedRun& q) {
    const std::string key = RunKey(q.sweep_id, q.content_hash);
    if (training.count(key) > 0) return true;
    if (q.nodes > 1) {
      if (std::optional<GangPlacement> gang = PlaceMultiNode(&nodes, q.run_id, q.nodes, q.gpus)) {
        plan.push_back(Planned{q, std::move(*gang)});
        training.insert(key);
      } else {
        ReserveForGang(&nodes, q.nodes, q.gpus);
      }
    } else if (std::optional<Placement> p = PlaceGang(&nodes, q.run_id, q.gpus)) {
      plan.push_back(Planned{q, {std::move(*p)}});
      training.insert(key);
    }
    for (const NodeFree& n : nodes) {
      if (!n.free_slots.empty()) return true;
    }
    return false;
  }));
  return plan;
}

v1::Gang MakeGang(const GangPlacement& nodes, const std::vector<NodeFree>& workers, uint32_t port) {
  v1::Gang gang;
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::GangMember* m = gang.add_members();
    m->set_node_rank(static_cast<uint32_t>(i));
    m->set_worker_id(nodes[i].worker_id);
    for (uint32_t s : nodes[i].slots) m->add_slots(s);
  }
  for (const NodeFree& w : workers) {
    if (w.worker_id == nodes.front().worker_id) gang.set_master_addr(w.addr);
  }
  gang.set_master_port(port);
  return gang;
}

}  // namespace

void Scheduler::SetRendezvousPorts(uint32_t first, uint32_t last) {
  absl::MutexLock pass(&pass_mu_);
  absl::MutexLock ports(&ports_mu_);
  first_port_ = first;
  last_port_ = std::max(first, last);
}

uint32_t Scheduler::NextPort() {
  absl::MutexLock ports(&ports_mu_);
  const uint32_t port = first_port_ + next_port_ % (last_port_ - first_port_ + 1);
  ++next_port_;
  return port;
}

std::optional<std::string> Scheduler::CountTakenPort(int64_t run_id) {
  absl::MutexLock ports(&ports_mu_);
  if (++taken_ports_[run_id] < last_port_ - first_port_ + 1) return std::nullopt;
  taken_ports_.erase(run_id);
  return absl::StrCat(first_port_, "-", last_port_);
}

void Scheduler::ClearTakenPorts(int64_t run_id) {
  absl::MutexLock ports(&ports_mu_);
  taken_ports_.erase(run_id);
}

absl::StatusOr<std::map<int64_t, std::string>> Scheduler::GangWaitReasons(Database* db) const {
  std::map<int64_t, std::string> reasons;
  NM_ASSIGN_OR_RETURN(std::vector<NodeFree> nodes, FreeNodes(db, *hub_));
  NM_RETURN_IF_ERROR(ScanQueue(db, UINT32_MAX, [&](const QueuedRun& q) {
    if (q.nodes > 1) reasons[q.run_id] = GangWaitReason(nodes, q.nodes, q.gpus);
    return true;
  }));
  return reasons;
}

absl::StatusOr<int> Scheduler::RunPass() {
  absl::MutexLock pass(&pass_mu_);
  std::vector<std::pair<int64_t, v1::Assignment>> made;  // One per node.
  int runs = 0;
  NM_RETURN_IF_ERROR(store_->Write([&](Database* db) -> absl::Status {
    made.clear();
    runs = 0;
    NM_ASSIGN_OR_RETURN(std::vector<NodeFree> nodes, FreeNodes(db, *hub_));
    if (nodes.empty()) return absl::OkStatus();
    NM_ASSIGN_OR_RETURN(std::vector<Planned> plan, Plan(db, nodes));
    runs = static_cast<int>(plan.size());
    int64_t now = NowMs();
    for (const Planned& p : plan) {
      if (p.run.nodes > 1) {
        NM_ASSIGN_OR_RETURN(auto gang,
                            AssignGang(db, p.run.run_id, MakeGang(p.nodes, nodes, NextPort()), now));
        made.insert(made.end(), gang.begin(), gang.end());
        continue;
      }
      const Placement& one = p.nodes.front();
      NM_ASSIGN_OR_RETURN(v1::Assignment a, AssignRun(db, one.run_id, one.worker_id, one.slots, now));
      made.emplace_back(one.worker_id, std::move(a));
    }
    return absl::OkStatus();
  }));
  // A push that finds the stream gone leaves the run ASSIGNED: it is re-sent when the worker reconnects, or
  // requeued when its lease runs out.
  for (const auto& [worker, a] : made) hub_->Push(worker, a);
  return runs;
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
