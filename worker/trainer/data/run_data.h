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
#include "worker/trainer/data/decode_failure_log.h"
#include "worker/trainer/data/encoded_dataset.h"
#include "worker/trainer/data/run_transforms.h"

namespace nmsparse {

struct RunData {
  std::unique_ptr<Dataset> train_all, eval_all;
  std::unique_ptr<Dataset> train, eval;  // data.train_subset / eval_subset of the above.
  Normalization norm;
  // Stored images (imagefolder, packed, cifar10, cifar100): the readers under train_all / eval_all, their
  // transforms (timm's pipeline) and the logs of images that could not be decoded, which the trainer reports
  // per epoch and checks against the threshold (decode_failure_log.h). Null otherwise.
  std::unique_ptr<EncodedDataset> encoded_train, encoded_eval;
  RunTransforms transforms;
  std::unique_ptr<DecodeFailureLog> train_failures, eval_failures;
};

// Opens fashion_mnist (data.path), synthetic (class prototypes from `seed`; evaluation images follow the
// training ones), shards (data.path/{train,eval}), imagefolder (data.path/{train,val}; `validation` when
// there is no `val`, as timm's reference configs name it), packed (data.path/{train,val}-*.nmjpeg) or
// cifar10 / cifar100 (their binary files in data.path); stored images go through `config`'s transforms
// (schemas/data_pipeline.h) to the model's size. InvalidArgument for a spec mistake (an unknown dataset,
// shards without a path); another code when the data is missing or unreadable, or its images or classes do
// not fit `arch` (the message names the keys to set).
absl::StatusOr<RunData> LoadRunData(const ExperimentConfig& config, const ModelArch& arch);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RUN_DATA_H_
