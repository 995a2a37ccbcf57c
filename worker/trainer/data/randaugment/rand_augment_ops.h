// timm's RandAugment ops by name (timm.data.auto_augment, timm 1.0.31): the op sets a config selects, each
// op's magnitude -> argument mapping (LEVEL_TO_ARG), and the op itself on an image.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_OPS_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_OPS_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "worker/trainer/data/image.h"
#include "worker/trainer/data/randaugment/pil_affine.h"
#include "schemas/rand_augment_config.h"

namespace nmsparse {

enum class RandAugmentOp {
  kAutoContrast,
  kEqualize,
  kInvert,
  kRotate,
  kPosterize,
  kPosterizeIncreasing,
  kSolarize,
  kSolarizeIncreasing,
  kSolarizeAdd,
  kColor,
  kColorIncreasing,
  kContrast,
  kContrastIncreasing,
  kBrightness,
  kBrightnessIncreasing,
  kSharpness,
  kSharpnessIncreasing,
  kShearX,
  kShearY,
  kTranslateXRel,
  kTranslateYRel,
};

// timm's name of the op ("ShearX").
absl::string_view RandAugmentOpName(RandAugmentOp op);

// An op with its draw weight (1 in the unweighted sets).
struct WeightedRandAugmentOp {
  RandAugmentOp op;
  double weight;
};

// _RAND_TRANSFORMS, _RAND_INCREASING_TRANSFORMS or _RAND_WEIGHTED_0, in timm's order.
std::vector<WeightedRandAugmentOp> RandAugmentOps(const RandAugmentConfig& config);

// Whether the op's argument is negated at random (timm's _randomly_negate), and whether it resamples.
bool IsSignedRandAugmentOp(RandAugmentOp op);
bool IsGeometricRandAugmentOp(RandAugmentOp op);

// LEVEL_TO_ARG[op](magnitude) with `negate` standing for _randomly_negate's draw; 0 for the ops without one.
// Posterize's bit count and the Solarize thresholds are whole numbers, as timm's int().
double RandAugmentArg(RandAugmentOp op, double magnitude, bool negate);

// NAME_TO_OP[op](image, arg, resample=resample, fillcolor=fill). PosterizeIncreasing at m >= 10 (and
// Posterize at m < 2.5) keeps 0 bits: black, as Pillow < 10 gave; timm 1.0.31 on Pillow 10+ raises there.
void ApplyRandAugmentOp(RandAugmentOp op, double arg, pil::Resample resample, const pil::Fill& fill,
                        Image& image);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_OPS_H_
