// Whether a layer rule makes W~ exactly 2:4 along in_features (what the 2:4 kernels can run): a hard mask
// (SR-STE, or a decaying recipe at D = 0) of N:M 2:4 over every row block of a linear, grouped along rows.
#ifndef NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TWO_FOUR_RULE_H_
#define NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TWO_FOUR_RULE_H_

#include <string>

#include "worker/sparsity/layer_rule.h"

namespace nmsparse {

// Empty when W~ under `rule` is exactly 2:4 along in_features; else why not, for the metric lines
// ("dense phase", "decay D=0.25 keeps pruned weights", "N:M 1:8", ...). nullptr means dense.
std::string WhyNotTwoFour(const LayerRule* rule);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_SEMI_STRUCTURED_TWO_FOUR_RULE_H_
