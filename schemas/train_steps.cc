#include "schemas/train_steps.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace nmsparse {

std::optional<int64_t> TrainImages(const ExperimentConfig& config) {
  std::optional<int64_t> all;
  if (config.data.dataset == "synthetic") all = config.data.synthetic_size;
  if (config.data.dataset == "fashion_mnist" && config.data.path.empty()) all = kFashionMnistTrainImages;
  if (!all.has_value()) return std::nullopt;
  return config.data.train_subset > 0 ? std::min<int64_t>(*all, config.data.train_subset) : *all;
}

std::optional<int64_t> StepsPerEpoch(const ExperimentConfig& config) {
  const std::optional<int64_t> images = TrainImages(config);
  if (!images.has_value() || config.data.batch_size < 1) return std::nullopt;
  return *images / config.data.batch_size / std::max(1, config.optimizer.grad_accum_steps);
}

absl::Status CheckEpochHasSteps(const ExperimentConfig& config) {
  const std::optional<int64_t> steps = StepsPerEpoch(config);
  if (!steps.has_value() || *steps > 0) return absl::OkStatus();
  const int64_t per_step = int64_t{config.data.batch_size} * std::max(1, config.optimizer.grad_accum_steps);
  return absl::InvalidArgumentError(absl::StrCat(
      "data.batch_size: value ", config.data.batch_size,
      config.optimizer.grad_accum_steps > 1
          ? absl::StrCat(" (x optimizer.grad_accum_steps ", config.optimizer.grad_accum_steps, " = ",
                         per_step, ")")
          : "",
      " is larger than the ", *TrainImages(config), " training images of ", config.data.dataset,
      config.data.dataset == "synthetic"
          ? absl::StrCat(" (data.synthetic_size ", config.data.synthetic_size, ")")
          : "",
      config.data.train_subset > 0 ? absl::StrCat(" (data.train_subset ", config.data.train_subset, ")") : "",
      ": an epoch would make no optimizer step"));
}

}  // namespace nmsparse
