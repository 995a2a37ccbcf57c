// A run's spec as the reports read it: its resolved_spec (canonical YAML, the one stored form of a run's
// spec) parsed by the spec's key table, remembered by its text (reports read a sweep's few distinct specs
// many times, and parsing one costs about 100 us).
#ifndef NMSPARSE_REPORT_RUN_SPEC_H_
#define NMSPARSE_REPORT_RUN_SPEC_H_

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/experiment_config.h"
#include "schemas/sparsity_config.h"

namespace nmsparse::report {

// The run's spec; an error for a run listed without it (ListRuns leaves specs out).
absl::StatusOr<ExperimentConfig> RunSpec(const v1::Run& run);

// The run's sparsity section; the default (dense) section for a run listed without its spec.
SparsityConfig RunSparsity(const v1::Run& run);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_RUN_SPEC_H_
