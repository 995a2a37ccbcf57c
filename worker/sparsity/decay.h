// The MDGF decay factor D(j) of the pruned weights (docs/sparsity-method.md §2), in double precision: near
// full cancellation (beta = 1e-4, j = 9999.5) a float computation of 1 - beta*j is off by ~1e-4 relative.
#ifndef NMSPARSE_WORKER_SPARSITY_DECAY_H_
#define NMSPARSE_WORKER_SPARSITY_DECAY_H_

#include "schemas/sparsity_config.h"

namespace nmsparse {

// STEP: 0; LINEAR: max(1 - beta*j, 0); EXP: exp(-beta*j). `j` counts optimizer steps from the first step of
// the sparse phase (it may be fractional in tests, as in the golden vectors).
double DecayValue(DecayType type, double beta, double j);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_SPARSITY_DECAY_H_
