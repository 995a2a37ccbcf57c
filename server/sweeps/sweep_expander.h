// How the coordinator turns a SweepSpec into runs: validation and expansion live in the schemas library; the
// service only needs this function, so tests can also give it a small expander of their own.
#ifndef NMSPARSE_SERVER_SWEEPS_SWEEP_EXPANDER_H_
#define NMSPARSE_SERVER_SWEEPS_SWEEP_EXPANDER_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/run_table.h"

namespace nmsparse::server {

// Returns every run of the sweep (index, labels, content hash, canonical YAML, spec, gpus), or
// INVALID_ARGUMENT naming the key path, the value and the reason. priority and max_retries are filled in by
// the service from the SweepSpec.
using SweepExpander = std::function<absl::StatusOr<std::vector<NewRun>>(const v1::SweepSpec&)>;

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_SWEEP_EXPANDER_H_
