// ValidateExperiment with its results remembered by the values it reads (model, data shape and batch, gpus,
// epochs and warm-up, the whole sparsity section): the runs of a sweep mostly differ in keys that validation
// never reads (seed, lr, ...), and the numel % M check walks every sparsified layer of the model. One memo
// per expansion; not thread-safe.
#ifndef NMSPARSE_SCHEMAS_VALIDATION_MEMO_H_
#define NMSPARSE_SCHEMAS_VALIDATION_MEMO_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

class ValidationMemo {
 public:
  // ValidateExperiment(config), computed once per distinct set of the values it reads.
  absl::Status Validate(const ExperimentConfig& config);

 private:
  absl::flat_hash_map<std::string, absl::Status> results_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_VALIDATION_MEMO_H_
