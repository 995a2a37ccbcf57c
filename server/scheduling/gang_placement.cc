#include "server/scheduling/gang_placement.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace nmsparse::server {
namespace {

// Workers that may form one gang: same shared storage (never none), same slot kind, and either all on
// loopback addresses (test nodes on one machine) or none.
using GroupKey = std::tuple<std::string, int, bool>;

std::map<GroupKey, std::vector<NodeFree*>> Groups(std::vector<NodeFree>* nodes) {
  std::map<GroupKey, std::vector<NodeFree*>> groups;
  for (NodeFree& n : *nodes) {
    if (!n.storage.empty()) groups[{n.storage, n.kind, n.loopback}].push_back(&n);
  }
  return groups;
}

// The `count` members of `group` with room for `need` slots, fewest free first (ties: lower id).
std::vector<NodeFree*> BestFit(std::vector<NodeFree*> group, size_t need, size_t count) {
  group.erase(std::remove_if(group.begin(), group.end(),
                             [need](const NodeFree* n) { return n->free_slots.size() < need; }),
              group.end());
  if (group.size() < count) return {};
  std::sort(group.begin(), group.end(), [](const NodeFree* a, const NodeFree* b) {
    if (a->free_slots.size() != b->free_slots.size()) return a->free_slots.size() < b->free_slots.size();
    return a->worker_id < b->worker_id;
  });
  group.resize(count);
  std::sort(group.begin(), group.end(),
            [](const NodeFree* a, const NodeFree* b) { return a->worker_id < b->worker_id; });
  return group;
}

std::string SlotWord(int kind, uint32_t n) {
  return absl::StrCat(n, " free ", kind == kGpuSlot ? "GPU" : "CPU", n == 1 ? " slot" : " slots");
}

}  // namespace

std::optional<GangPlacement> PlaceMultiNode(std::vector<NodeFree>* nodes, int64_t run_id, uint32_t count,
                                            uint32_t gpus) {
  const size_t need = std::max<uint32_t>(gpus, 1);
  for (auto& [key, group] : Groups(nodes)) {
    std::vector<NodeFree*> chosen = BestFit(group, need, count);
    if (chosen.empty()) continue;
    GangPlacement gang;
    for (NodeFree* n : chosen) {
      gang.push_back(Placement{run_id, n->worker_id,
                               std::vector<uint32_t>(n->free_slots.begin(), n->free_slots.begin() + need)});
      n->free_slots.erase(n->free_slots.begin(), n->free_slots.begin() + need);
    }
    return gang;
  }
  return std::nullopt;
}

std::vector<int64_t> ReserveForGang(std::vector<NodeFree>* nodes, uint32_t count, uint32_t gpus) {
  const uint32_t need = std::max<uint32_t>(gpus, 1);
  for (auto& [key, group] : Groups(nodes)) {
    std::vector<NodeFree*> able;
    for (NodeFree* n : group) {
      if (n->total_slots >= need) able.push_back(n);
    }
    if (able.size() < count) continue;
    // Closest to fitting first: most free slots, then lower id.
    std::sort(able.begin(), able.end(), [](const NodeFree* a, const NodeFree* b) {
      if (a->free_slots.size() != b->free_slots.size()) return a->free_slots.size() > b->free_slots.size();
      return a->worker_id < b->worker_id;
    });
    std::vector<int64_t> reserved;
    for (size_t i = 0; i < count; ++i) reserved.push_back(able[i]->worker_id);
    nodes->erase(std::remove_if(nodes->begin(), nodes->end(),
                                [&reserved](const NodeFree& n) {
                                  return std::find(reserved.begin(), reserved.end(), n.worker_id) !=
                                         reserved.end();
                                }),
                 nodes->end());
    return reserved;
  }
  return {};
}

std::string GangWaitReason(const std::vector<NodeFree>& nodes, uint32_t count, uint32_t gpus) {
  const uint32_t need = std::max<uint32_t>(gpus, 1);
  // The group closest to fitting speaks for the gang.
  std::map<GroupKey, size_t> fitting;
  for (const NodeFree& n : nodes) {
    if (!n.storage.empty()) fitting[{n.storage, n.kind, n.loopback}] += n.free_slots.size() >= need ? 1 : 0;
  }
  size_t best = 0;
  int kind = nodes.empty() ? kCpuSlot : nodes.front().kind;
  for (const auto& [key, f] : fitting) {
    if (f > best || (best == 0 && key == fitting.begin()->first)) {
      best = f;
      kind = std::get<1>(key);
    }
  }
  std::string reason =
      absl::StrCat("needs ", count, " nodes with ", SlotWord(kind, need), " each on one shared storage; ",
                   best, best == 1 ? " has" : " have", " them");
  if (fitting.empty())
    absl::StrAppend(&reason, " (no live worker declares its shared storage: nmworker --storage)");
  return reason;
}

}  // namespace nmsparse::server
