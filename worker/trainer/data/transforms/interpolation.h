// Interpolation names as timm spells them (str_to_interp_mode): "bilinear", "bicubic", "nearest", and for
// training also "random" (bilinear or bicubic, drawn per image).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_INTERPOLATION_H_
#define NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_INTERPOLATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/data/image_transform.h"
#include "worker/trainer/data/transforms/resample.h"

namespace nmsparse {

enum class TrainInterpolation { kNearest, kBilinear, kBicubic, kRandom };

// InvalidArgument naming the value and the known names.
absl::StatusOr<Interpolation> ParseInterpolation(const std::string& name);
absl::StatusOr<TrainInterpolation> ParseTrainInterpolation(const std::string& name);

std::string InterpolationName(Interpolation filter);
std::string InterpolationName(TrainInterpolation filter);

// The filter for one image: `random` draws bilinear or bicubic with equal odds (timm's random.choice).
Interpolation PickInterpolation(TrainInterpolation filter, ImageRng& rng);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_TRANSFORMS_INTERPOLATION_H_
