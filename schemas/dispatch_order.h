// The order in which a sweep with early stopping hands its runs to workers (docs/sweeps.md, "Dispatch
// order"): a seeded shuffle keyed by each run's content, so that the order, and with it the order in which
// runs reach ASHA's rungs, does not depend on how the grid's axes were written. A pure function, shared by
// the coordinator (which stores the runs in this order) and by `nmctl validate` (which prints it).
#ifndef NMSPARSE_SCHEMAS_DISPATCH_ORDER_H_
#define NMSPARSE_SCHEMAS_DISPATCH_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nmsparse {

// Positions into `content_hashes` (one per run, in grid order) sorted by SHA-256 of "SEED:HASH"; runs with
// the same hash (a dense run in every N:M column) keep their grid order. The same runs, in any grid order,
// get the same sequence of hashes.
std::vector<size_t> DispatchOrder(uint64_t seed, const std::vector<std::string>& content_hashes);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_DISPATCH_ORDER_H_
