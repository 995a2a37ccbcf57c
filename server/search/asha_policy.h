// The ASHA stopping rule (asynchronous successive halving, Li et al., "A System for Massively Parallel
// Hyperparameter Tuning", 2020), as a pure function of the results seen at one rung; docs/sweeps.md, "Early
// stopping", states the rule. The coordinator feeds it the results in the order they were reported and stores
// each decision (server/search/early_stopping.h), so a decision is taken once and never revisited.
#ifndef NMSPARSE_SERVER_SEARCH_ASHA_POLICY_H_
#define NMSPARSE_SERVER_SEARCH_ASHA_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nmsparse/v1/sweep.pb.h"
#include "schemas/asha_rungs.h"  // AshaRungs, AshaRungAt: the rungs this rule decides at.

namespace nmsparse::server {

struct AshaDecision {
  bool promoted = false;
  int keep = 0;         // How many of the results at the rung go on: max(1, floor(n / reduction_factor)).
  int competitors = 0;  // n: the results at the rung, this one included.
  double cutoff = 0;    // The keep-th best value: the worst value that still goes on.
  std::string reason;   // "asha: rung 1 (epoch 1): top1 0.61 < cutoff 0.68 (best 1 of 2 go on)".
};

// Decides for a run reaching rung `rung` (at `resource` epochs) with `value`, given the values that earlier
// runs reported at the same rung, in report order. It goes on when its value is at least as good as the
// cutoff (ties go on), i.e. when it is among the best `keep` of the n results including itself.
AshaDecision DecideAsha(const v1::EarlyStopping& policy, int rung, uint32_t resource, double value,
                        const std::vector<double>& earlier);

// What a run that reaches a rung with fewer than AshaMinPeers results (`have`, its own included) is told: it
// goes on, and is decided once the rung has them. "asha: rung 1 (epoch 1): top1 0.5: waits for 3 results at
// the rung before deciding (1 so far); goes on meanwhile".
std::string AshaWaitReason(const v1::EarlyStopping& policy, int rung, uint32_t resource, double value,
                           size_t have);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SEARCH_ASHA_POLICY_H_
