// Which way a ranking by a metric goes: the caller's explicit word when it gave one, else the metric's
// declared direction (contract/metric_direction.h). Shared by the sweep blocks (ASHA's and TPE's `mode`),
// nmctl best and the coordinator's GetBest, so that an undeclared metric is refused the same way everywhere.
#ifndef NMSPARSE_SCHEMAS_METRIC_OBJECTIVE_H_
#define NMSPARSE_SCHEMAS_METRIC_OBJECTIVE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nmsparse {

// True to maximize `metric`. `mode` is "max", "min" or "" (not given). InvalidArgument
// "KEY: metric 'acc' has no declared direction (top1 up, ..., eval_loss down); HOW" when `mode` is empty and
// the metric has no declared direction; `key` names where the metric came from and `how` how to say it.
absl::StatusOr<bool> ObjectiveMaximizes(absl::string_view metric, absl::string_view mode,
                                        absl::string_view key, absl::string_view how);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_METRIC_OBJECTIVE_H_
