// The datasets a run trains and evaluates on, chosen by its spec's `data` section (docs/nmtrain.md), checked
// against the model before any training starts.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RUN_DATA_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RUN_DATA_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "schemas/experiment_config.h"
#include "schemas/model_catalog.h"
#include "worker/trainer/data/batch_loader.h"
#include "worker/trainer/data/dataset.h"

namespace nmsparse {

struct RunData {
  std::unique_ptr<Dataset> train_all, eval_all;
  std::unique_ptr<Dataset> train, eval;  // data.train_subset / eval_subset of the above.
  Normalization norm;
};

// Opens fashion_mnist (data.path), synthetic (class prototypes from `seed`; evaluation images follow the
// training ones) or shards (data.path/{train,eval}). InvalidArgument for a spec mistake (an unknown dataset,
// shards without a path); another code when the data is missing or unreadable, or its images or classes do
// not fit `arch` (the message names the keys to set).
absl::StatusOr<RunData> LoadRunData(const DataConfig& data, uint64_t seed, const ModelArch& arch);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RUN_DATA_H_
