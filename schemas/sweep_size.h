// How many runs a sweep expands to, known before expanding it: the product of the grid axes' sizes times the
// random draws per grid point (schemas/sweep.h). nmctl and nmserver refuse a sweep past their limit on this
// count, so that an oversized sweep costs microseconds, not the memory of its runs.
#ifndef NMSPARSE_SCHEMAS_SWEEP_SIZE_H_
#define NMSPARSE_SCHEMAS_SWEEP_SIZE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse {

// The number of runs ExpandSweep makes of `sweep` (a search's budget when it has a search block), saturated
// at INT64_MAX (30 axes of 10 values do not overflow).
int64_t SweepRunCount(const v1::SweepSpec& sweep);

// OK when SweepRunCount(sweep) <= limit; else InvalidArgument "the sweep expands to 10,000,000 runs, more
// than the limit of 100,000 (HOW_TO_RAISE)", where `how_to_raise` names the flag that sets `limit`.
absl::Status CheckSweepRunCount(const v1::SweepSpec& sweep, int64_t limit, absl::string_view how_to_raise);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SWEEP_SIZE_H_
