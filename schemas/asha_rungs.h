// The rungs of an ASHA policy: the epochs at which runs are compared (docs/sweeps.md, "Early stopping"). A
// pure function of the sweep's spec, shared by the coordinator's stopping rule (server/search/asha_policy.h)
// and by `nmctl validate`, which prints the rungs before anything runs.
#ifndef NMSPARSE_SCHEMAS_ASHA_RUNGS_H_
#define NMSPARSE_SCHEMAS_ASHA_RUNGS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse {

// The rungs' resources in order: min_resource * reduction_factor^k < max_resource.
std::vector<uint32_t> AshaRungs(const v1::EarlyStopping& policy, uint32_t max_resource);

// The rung whose resource is `resource`, or nullopt when `resource` is no rung.
std::optional<int> AshaRungAt(const v1::EarlyStopping& policy, uint32_t max_resource, uint32_t resource);

// The results a rung waits for before it decides (docs/sweeps.md, "The rule"): min_peers, or the reduction
// factor when it is 0 (absent), so that the first decision at a rung picks the best of η, never a lone run.
uint32_t AshaMinPeers(const v1::EarlyStopping& policy);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_ASHA_RUNGS_H_
