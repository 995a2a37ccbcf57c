#include "server/search/asha_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "contract/metric_direction.h"

namespace nmsparse::server {

AshaDecision DecideAsha(const v1::EarlyStopping& policy, int rung, uint32_t resource, double value,
                        const std::vector<double>& earlier) {
  const bool maximize = policy.mode() != "min";
  std::vector<double> all = earlier;
  all.push_back(value);
  // Best first; a non-finite value (a diverged run) ranks last (contract::RanksBefore).
  std::sort(all.begin(), all.end(),
            [maximize](double a, double b) { return contract::RanksBefore(a, b, maximize); });
  AshaDecision d;
  d.competitors = static_cast<int>(all.size());
  // At least one goes on: the first run to reach a rung has nothing to lose against.
  d.keep = std::max(1, d.competitors / static_cast<int>(policy.reduction_factor()));
  d.cutoff = all[d.keep - 1];
  // A non-finite value never goes on, not even as the first at its rung.
  d.promoted = std::isfinite(value) && !contract::RanksBefore(d.cutoff, value, maximize);
  const char* op = d.promoted ? (maximize ? ">=" : "<=") : (maximize ? "<" : ">");
  // Rungs are numbered from 1 for people, as validate numbers them (issue 40); `rung` counts from 0.
  d.reason = absl::StrFormat("asha: rung %d (%s %d): %s %.4g %s cutoff %.4g (best %d of %d go on)%s",
                             rung + 1, policy.resource(), resource, policy.metric(), value, op, d.cutoff,
                             d.keep, d.competitors, d.promoted ? ": promoted" : ": stopped");
  return d;
}

std::string AshaWaitReason(const v1::EarlyStopping& policy, int rung, uint32_t resource, double value,
                           size_t have) {
  return absl::StrFormat(
      "asha: rung %d (%s %d): %s %.4g: waits for %d results at the rung before deciding (%d so far); goes on "
      "meanwhile",
      rung + 1, policy.resource(), resource, policy.metric(), value, AshaMinPeers(policy), have);
}

}  // namespace nmsparse::server
