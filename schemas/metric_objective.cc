#include "schemas/metric_objective.h"

#include "absl/strings/str_cat.h"
#include "contract/metric_direction.h"

namespace nmsparse {

absl::StatusOr<bool> ObjectiveMaximizes(absl::string_view metric, absl::string_view mode,
                                        absl::string_view key, absl::string_view how) {
  if (mode == "max") return true;
  if (mode == "min") return false;
  switch (contract::DirectionOf(std::string_view(metric.data(), metric.size()))) {
    case contract::MetricDirection::kMaximize:
      return true;
    case contract::MetricDirection::kMinimize:
      return false;
    case contract::MetricDirection::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(key, ": metric '", metric, "' has no declared direction (",
                                                 contract::DeclaredDirectionsText(), "); ", how));
}

}  // namespace nmsparse
