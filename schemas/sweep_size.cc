#include "schemas/sweep_size.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "schemas/limits.h"

namespace nmsparse {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

}  // namespace

int64_t SweepRunCount(const v1::SweepSpec& sweep) {
  // A search proposes its budget of runs, one at a time (server/search/tpe_sampler.h).
  if (!sweep.search().algorithm().empty()) return sweep.search().budget();
  int64_t runs = 1;
  for (const v1::GridAxis& axis : sweep.grid()) runs = SaturatingMultiply(runs, axis.values_size());
  // As in ExpandSweep: max(num_samples, 1) draws per grid point when there are random axes.
  const int64_t draws = sweep.random_size() == 0 ? 1 : std::max<int64_t>(1, sweep.num_samples());
  return SaturatingMultiply(runs, draws);
}

absl::Status CheckSweepRunCount(const v1::SweepSpec& sweep, int64_t limit, absl::string_view how_to_raise) {
  const int64_t runs = SweepRunCount(sweep);
  if (runs <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the sweep expands to ", runs == kSaturated ? "at least " : "", limits::FormatCount(runs),
                   " runs, more than the limit of ", limits::FormatCount(limit), " (", how_to_raise, ")"));
}

}  // namespace nmsparse
