#include "schemas/asha_rungs.h"

#include <algorithm>

namespace nmsparse {

std::vector<uint32_t> AshaRungs(const v1::EarlyStopping& policy, uint32_t max_resource) {
  std::vector<uint32_t> rungs;
  if (policy.min_resource() == 0 || policy.reduction_factor() < 2) return rungs;
  // 64-bit so that the geometric series cannot wrap before it passes max_resource.
  for (uint64_t r = policy.min_resource(); r < max_resource; r *= policy.reduction_factor()) {
    rungs.push_back(static_cast<uint32_t>(r));
  }
  return rungs;
}

std::optional<int> AshaRungAt(const v1::EarlyStopping& policy, uint32_t max_resource, uint32_t resource) {
  const std::vector<uint32_t> rungs = AshaRungs(policy, max_resource);
  auto it = std::find(rungs.begin(), rungs.end(), resource);
  if (it == rungs.end()) return std::nullopt;
  return static_cast<int>(it - rungs.begin());
}

uint32_t AshaMinPeers(const v1::EarlyStopping& policy) {
  return std::max<uint32_t>(1, policy.min_peers() > 0 ? policy.min_peers() : policy.reduction_factor());
}

}  // namespace nmsparse
