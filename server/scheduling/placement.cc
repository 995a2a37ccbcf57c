#include "server/scheduling/placement.h"

#include <algorithm>

namespace nmsparse::server {

std::optional<Placement> PlaceGang(std::vector<NodeFree>* nodes, int64_t run_id, uint32_t gpus) {
  size_t need = std::max<uint32_t>(gpus, 1);
  NodeFree* best = nullptr;
  for (NodeFree& n : *nodes) {
    if (n.free_slots.size() < need) continue;
    if (best == nullptr || n.free_slots.size() < best->free_slots.size() ||
        (n.free_slots.size() == best->free_slots.size() && n.worker_id < best->worker_id)) {
      best = &n;
    }
  }
  if (best == nullptr) return std::nullopt;
  Placement p{run_id, best->worker_id,
              std::vector<uint32_t>(best->free_slots.begin(), best->free_slots.begin() + need)};
  best->free_slots.erase(best->free_slots.begin(), best->free_slots.begin() + need);
  return p;
}

std::vector<uint32_t> FreeSlots(std::vector<uint32_t> all, const std::vector<uint32_t>& held) {
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  all.erase(
      std::remove_if(all.begin(), all.end(),
                     [&held](uint32_t s) { return std::find(held.begin(), held.end(), s) != held.end(); }),
      all.end());
  return all;
}

}  // namespace nmsparse::server
