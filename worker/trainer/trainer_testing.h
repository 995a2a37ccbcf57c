// Helpers shared by the trainer's tests: a per-test scratch directory, a spec parsed from YAML text, and
// nmtrain's metric lines taken apart.
#ifndef NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_
#define NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "schemas/experiment_config.h"
#include "worker/trainer/models/classifier.h"
#include "worker/trainer/trainer.h"

namespace nmsparse {

// `$TEST_TMPDIR/<name>.<pid>` (or under /tmp), created.
std::string TestTempDir(const std::string& name);

// A TCP port on 127.0.0.1 that was free a moment ago: the rendezvous port of a multi-rank test.
int FreeLoopbackPort();

// Options for an in-process run (RunTraining) into TestTempDir(name), its metric lines and log captured.
struct CapturedRun {
  explicit CapturedRun(const std::string& name);
  CapturedRun(const CapturedRun&) = delete;
  CapturedRun& operator=(const CapturedRun&) = delete;
  std::ostringstream metrics, log;
  TrainerOptions options;
};

// The experiment in `yaml`, parsed and validated; a failure is a test failure (EXPECT) naming the reason.
ExperimentConfig ParseValidExperiment(const std::string& yaml);

// The metric lines of `kind` ("step", "epoch", "final") in nmtrain's JSON-lines output, in order.
std::vector<std::string> MetricLines(const std::string& out, const std::string& kind);

// The fields of one flat metric line as text (strings without their quotes).
std::map<std::string, std::string> MetricFields(const std::string& line);

// The fields of the last line of `kind`; empty when there is none.
std::map<std::string, std::string> LastMetricFields(const std::string& out, const std::string& kind);

// How closely two checkpoints' weights must agree: exactly (a resume), or within torch::allclose's
// rtol/atol (runs whose arithmetic differs in summation order, e.g. an all-reduce over ranks).
struct WeightTolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

// Loads the checkpoints of run directories `dir_a` and `dir_b` into two fresh `model_name` models and expects
// every parameter to agree within `tolerance` (EXPECT, naming the parameter and its largest difference).
// Returns the model loaded from `dir_a`, for checks of its own.
std::shared_ptr<ClassifierImpl> ExpectSameCheckpointWeights(const std::string& model_name,
                                                            const std::string& dir_a,
                                                            const std::string& dir_b,
                                                            WeightTolerance tolerance = {});

// The summed absolute difference between `trained`'s parameters and those of a freshly initialised
// `model_name`: a comparison of trained weights means something only when training moved them.
double DistanceFromFreshWeights(const std::string& model_name, ClassifierImpl& trained);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_TRAINER_TESTING_H_
