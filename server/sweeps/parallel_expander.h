// Spreads a large grid sweep's expansion (validation, canonical YAML, hashing: about a millisecond per run)
// over several threads. The first axis's values are cut into contiguous slices; each slice is a sweep of its
// own whose runs come out in the serial order (the first axis is the slowest), so the concatenation,
// re-indexed, is exactly the serial expansion. Sweeps with random axes (draws depend on the run order) and
// small sweeps are expanded serially; so is any sweep with an error, so that the message names the right run
// index.
#ifndef NMSPARSE_SERVER_SWEEPS_PARALLEL_EXPANDER_H_
#define NMSPARSE_SERVER_SWEEPS_PARALLEL_EXPANDER_H_

#include "server/sweeps/sweep_expander.h"

namespace nmsparse::server {

// `serial` must be safe to call from several threads at once. threads <= 1 returns `serial` itself.
SweepExpander ParallelExpander(SweepExpander serial, int threads, size_t min_runs = 256);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_PARALLEL_EXPANDER_H_
