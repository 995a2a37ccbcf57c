// How long an epoch is, where the spec alone tells: the training images of the dataset (fashion_mnist: its
// 60,000; synthetic: data.synthetic_size; either cut to data.train_subset) and the optimizer steps they make
// (the trainer drops the last partial batch, then groups grad_accum_steps batches per step). Shards are
// counted only where they are, by the worker's trainer. Used to refuse at submit an epoch of no step, and
// by nmctl for a run's step total and ETA.
#ifndef NMSPARSE_SCHEMAS_TRAIN_STEPS_H_
#define NMSPARSE_SCHEMAS_TRAIN_STEPS_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "schemas/experiment_config.h"

namespace nmsparse {

// Images of Fashion-MNIST's training split (Debian's dataset-fashion-mnist, the default data.path).
inline constexpr int64_t kFashionMnistTrainImages = 60000;

// Training images an epoch goes over, or nullopt where the spec does not tell (shards, a data.path of one's
// own for fashion_mnist).
std::optional<int64_t> TrainImages(const ExperimentConfig& config);

// Optimizer steps per epoch, or nullopt as for TrainImages.
std::optional<int64_t> StepsPerEpoch(const ExperimentConfig& config);

// InvalidArgument naming data.batch_size when an epoch would make no optimizer step.
absl::Status CheckEpochHasSteps(const ExperimentConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_TRAIN_STEPS_H_
