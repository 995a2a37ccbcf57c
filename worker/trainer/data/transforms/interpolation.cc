#include "worker/trainer/data/transforms/interpolation.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "worker/trainer/data/transforms/random_draws.h"

namespace nmsparse {

absl::StatusOr<TrainInterpolation> ParseTrainInterpolation(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "nearest") return TrainInterpolation::kNearest;
  if (lower == "bilinear") return TrainInterpolation::kBilinear;
  if (lower == "bicubic") return TrainInterpolation::kBicubic;
  if (lower == "random") return TrainInterpolation::kRandom;
  return absl::InvalidArgumentError("interpolation \"" + name +
                                    "\" is unknown: use nearest, bilinear, bicubic or random");
}

absl::StatusOr<Interpolation> ParseInterpolation(const std::string& name) {
  absl::StatusOr<TrainInterpolation> any = ParseTrainInterpolation(name);
  if (any.ok() && *any == TrainInterpolation::kRandom) {
    return absl::InvalidArgumentError(
        "interpolation \"random\" applies to training only: use nearest, "
        "bilinear or bicubic");
  }
  if (!any.ok()) return any.status();
  return static_cast<Interpolation>(*any);
}

std::string InterpolationName(Interpolation filter) {
  return InterpolationName(static_cast<TrainInterpolation>(filter));
}

std::string InterpolationName(TrainInterpolation filter) {
  switch (filter) {
    case TrainInterpolation::kNearest:
      return "nearest";
    case TrainInterpolation::kBilinear:
      return "bilinear";
    case TrainInterpolation::kBicubic:
      return "bicubic";
    case TrainInterpolation::kRandom:
      return "random";
  }
  return "";
}

Interpolation PickInterpolation(TrainInterpolation filter, ImageRng& rng) {
  if (filter != TrainInterpolation::kRandom) return static_cast<Interpolation>(filter);
  return IntDraw(rng, 0, 1) == 0 ? Interpolation::kBilinear : Interpolation::kBicubic;
}

}  // namespace nmsparse
