// Whether a sweep will get runs it does not have yet: a search sweep does while its search goes on (fewer
// runs than its budget, not cancelled, not ended early); a grid or random sweep has all its runs from its
// submission. `nmctl follow` and the dashboard (which stops polling an ended sweep) ask it alike.
#ifndef NMSPARSE_SCHEMAS_MORE_RUNS_H_
#define NMSPARSE_SCHEMAS_MORE_RUNS_H_

#include <cstdint>

#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse {

// `total`: the runs the sweep has now, in any state.
inline bool MoreRunsComing(const v1::Sweep& sweep, uint64_t total) {
  const v1::Search& search = sweep.spec().search();
  if (search.algorithm().empty()) return total == 0;
  return !sweep.cancelled() && sweep.search_ended().empty() && total < search.budget();
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_MORE_RUNS_H_
