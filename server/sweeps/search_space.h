// A search sweep's space: the points its random axes span, as runs. A point (one value text per random axis)
// becomes a run by turning each axis into a one-value grid axis (label key=value) of the sweep and expanding
// it, so it is validated and hashed like any other run. The proposer expands its proposals this way, and
// submission checks the space's edges so that a space which can reach invalid runs is refused before it is
// stored, rather than when a proposal happens to reach one.
#ifndef NMSPARSE_SERVER_SWEEPS_SEARCH_SPACE_H_
#define NMSPARSE_SERVER_SWEEPS_SEARCH_SPACE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/run_table.h"
#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

// The run at `values` (one per random axis, in axis order), with index `index` and the sweep's settings
// (ApplySweepSettings). The expander's error as it is when the point is not a valid run.
absl::StatusOr<NewRun> ExpandPoint(const SweepExpander& expand, const v1::SweepSpec& spec, uint32_t index,
                                   const std::vector<std::string>& values);

// Combinations of the axes' edges checked at most: past this, each axis' edges are checked with the other
// axes at their middle.
inline constexpr int kMaxSpaceCorners = 256;

// OK when every edge of the space is a valid run: the min and max of each range axis and each choice of a
// categorical one; all their combinations when there are at most kMaxSpaceCorners, else each axis' edges
// with the other axes at their middle (server/search/tpe_sampler.h, ExtremeValues and MiddleValue). Otherwise
// INVALID_ARGUMENT naming the point, the key, the value and the constraint it breaks.
absl::Status CheckSearchSpace(const SweepExpander& expand, const v1::SweepSpec& spec);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_SEARCH_SPACE_H_
