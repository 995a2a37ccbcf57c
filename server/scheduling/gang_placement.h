// Placement of runs over several nodes (resources.nodes > 1): pure logic, like placement.h.
//
// A K-node run of G ranks per node is placed only when K distinct workers that declare the same shared
// storage (nmworker --storage) and offer the same kind of slot (GPU or CPU) each have G free slots at once;
// it gets all K or nothing. Each node is chosen best-fit (fewest free slots), and node 0 is the lowest
// worker id of the K.
//
// Reservation (anti-starvation): a gang that cannot be placed now, but could be on the live workers once
// their runs end (K workers of one storage and kind with at least G slots each), reserves the K of them
// with the most free slots. Runs behind it in queue order may not use reserved workers in the same pass, so
// their slots accumulate until the gang fits, however many small runs keep arriving. Runs ahead of it are
// placed first. A gang that could never fit on the live workers reserves nothing (it waits for workers).
#ifndef NMSPARSE_SERVER_SCHEDULING_GANG_PLACEMENT_H_
#define NMSPARSE_SERVER_SCHEDULING_GANG_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/scheduling/placement.h"

namespace nmsparse::server {

// One node of a gang: the worker and the slots its ranks use, in node-rank order.
using GangPlacement = std::vector<Placement>;

// Places `count` nodes of `gpus` ranks each and removes the slots taken from `nodes`; nullopt when they do
// not all fit now.
std::optional<GangPlacement> PlaceMultiNode(std::vector<NodeFree>* nodes, int64_t run_id, uint32_t count,
                                            uint32_t gpus);

// For a gang that did not fit: removes the workers it reserves from `nodes` (see above) and returns their
// ids, or returns none and leaves `nodes` alone when it could never fit on them.
std::vector<int64_t> ReserveForGang(std::vector<NodeFree>* nodes, uint32_t count, uint32_t gpus);

// Why a gang waits, e.g. "needs 2 nodes with 1 free CPU slot each on one shared storage; 1 has them".
std::string GangWaitReason(const std::vector<NodeFree>& nodes, uint32_t count, uint32_t gpus);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SCHEDULING_GANG_PLACEMENT_H_
