#include "server/search/asha_policy.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_format.h"

namespace nmsparse::server {

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

AshaDecision DecideAsha(const v1::EarlyStopping& policy, int rung, uint32_t resource, double value,
                        const std::vector<double>& earlier) {
  const bool maximize = policy.mode() != "min";
  std::vector<double> all = earlier;
  all.push_back(value);
  // Best first.
  if (maximize) {
    std::sort(all.begin(), all.end(), std::greater<double>());
  } else {
    std::sort(all.begin(), all.end());
  }
  AshaDecision d;
  d.competitors = static_cast<int>(all.size());
  // At least one goes on: the first run to reach a rung has nothing to lose against.
  d.keep = std::max(1, d.competitors / static_cast<int>(policy.reduction_factor()));
  d.cutoff = all[d.keep - 1];
  d.promoted = maximize ? value >= d.cutoff : value <= d.cutoff;
  const char* op = d.promoted ? (maximize ? ">=" : "<=") : (maximize ? "<" : ">");
  d.reason = absl::StrFormat("asha: rung %d (%s %d): %s %.4g %s cutoff %.4g (best %d of %d go on)%s", rung,
                             policy.resource(), resource, policy.metric(), value, op, d.cutoff, d.keep,
                             d.competitors, d.promoted ? ": promoted" : ": stopped");
  return d;
}

}  // namespace nmsparse::server
