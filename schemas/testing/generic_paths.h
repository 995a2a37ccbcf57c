// The generic (slow, obviously right) way of what the spec library does fast, for tests, fuzzers and the
// benchmark to compare the production paths with; never linked into a program (testonly).
#ifndef NMSPARSE_SCHEMAS_TESTING_GENERIC_PATHS_H_
#define NMSPARSE_SCHEMAS_TESTING_GENERIC_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nmsparse/v1/sweep.pb.h"
#include "schemas/experiment_config.h"
#include "schemas/sweep.h"

namespace nmsparse::testing {

// ExperimentConfigToYaml through yaml-cpp's emitter, as one document.
std::string CanonicalYamlByEmitter(const ExperimentConfig& config);

// ExpandSweep's runs resolved the generic way: every run's whole spec (the base's YAML with the run's
// overrides applied) parsed again and validated, its canonical YAML written by the emitter.
absl::StatusOr<std::vector<ResolvedRun>> ExpandSweepGeneric(const v1::SweepSpec& sweep);

}  // namespace nmsparse::testing

#endif  // NMSPARSE_SCHEMAS_TESTING_GENERIC_PATHS_H_
