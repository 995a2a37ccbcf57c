// The production SweepExpander: the schemas library's ExpandSweep (validation with key paths, grid and random
// axes, canonical YAML, SHA-256 content hash), adapted to the rows the coordinator stores.
#ifndef NMSPARSE_SERVER_SWEEPS_SCHEMAS_EXPANDER_H_
#define NMSPARSE_SERVER_SWEEPS_SCHEMAS_EXPANDER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "server/store/run_table.h"

namespace nmsparse::server {

absl::StatusOr<std::vector<NewRun>> ExpandWithSchemas(const v1::SweepSpec& spec);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_SWEEPS_SCHEMAS_EXPANDER_H_
