// Gang, best-fit placement of waiting runs onto worker slots. Pure logic, no database: the scheduler feeds it
// each live worker's free slots and the queue in order.
//
// A run asks for `gpus` slots on one node and gets all of them or none (gang). Among the nodes with enough
// free slots it goes to the fullest one (fewest free slots; ties to the lower worker id), which keeps whole
// nodes free for large runs instead of fragmenting every node. Runs are considered in queue order; a run that
// does not fit now is skipped and smaller runs behind it may start (no reservation). Slot kinds (GPU or CPU)
// are not mixed on one worker in practice and are not distinguished here: a slot is one rank.
#ifndef NMSPARSE_SERVER_SCHEDULING_PLACEMENT_H_
#define NMSPARSE_SERVER_SCHEDULING_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nmsparse::server {

constexpr int kGpuSlot = 1;  // v1::Slot::GPU
constexpr int kCpuSlot = 2;  // v1::Slot::CPU

struct NodeFree {
  int64_t worker_id = 0;
  std::vector<uint32_t> free_slots;  // Ascending slot indices.
  // For runs over several nodes (gang_placement.h).
  uint32_t total_slots = 0;
  std::string storage;    // The shared storage its work directory is on; empty: none.
  int kind = kCpuSlot;    // Its slots' kind.
  std::string addr;       // Where the other nodes reach it.
  bool loopback = false;  // addr is a loopback address: it forms gangs only with other loopback nodes.
};

struct Placement {
  int64_t run_id = 0;
  int64_t worker_id = 0;
  std::vector<uint32_t> slots;
};

// Places one gang of `gpus` ranks (0 counts as 1) and removes the slots it takes from `nodes`.
std::optional<Placement> PlaceGang(std::vector<NodeFree>* nodes, int64_t run_id, uint32_t gpus);

// A node's free slots: its slot indices minus those held, ascending.
std::vector<uint32_t> FreeSlots(std::vector<uint32_t> all, const std::vector<uint32_t>& held);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_PLACEMENT_H_
