// Helpers shared by the trainer's tests: a per-test scratch directory and a spec parsed from YAML text.
#ifndef NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_
#define NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_

#include <string>

#include "schemas/experiment_config.h"

namespace nmsparse {

// `$TEST_TMPDIR/<name>.<pid>` (or under /tmp), created.
std::string TestTempDir(const std::string& name);

// The experiment in `yaml`, parsed and validated; a failure is a test failure (EXPECT) naming the reason.
ExperimentConfig ParseValidExperiment(const std::string& yaml);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_
