#include "worker/trainer/data/randaugment/rand_augment_ops.h"

#include <algorithm>

#include "worker/trainer/data/randaugment/pil_colour_ops.h"

namespace nmsparse {
namespace {

using Op = RandAugmentOp;

// timm's _LEVEL_DENOM: magnitude 10 is an op's full strength.
constexpr double kLevelDenominator = 10.0;

int PosterizeBits(double magnitude) { return static_cast<int>((magnitude / kLevelDenominator) * 4); }
int SolarizeThreshold(double magnitude) {
  return std::min(256, static_cast<int>((magnitude / kLevelDenominator) * 256));
}
double Enhance(double magnitude) { return (magnitude / kLevelDenominator) * 1.8 + 0.1; }
double EnhanceIncreasing(double magnitude, bool negate) {
  const double level = (magnitude / kLevelDenominator) * .9;
  return std::max(0.1, 1.0 + (negate ? -level : level));
}
double Signed(double value, bool negate) { return negate ? -value : value; }

}  // namespace

absl::string_view RandAugmentOpName(RandAugmentOp op) {
  switch (op) {
    case Op::kAutoContrast:
      return "AutoContrast";
    case Op::kEqualize:
      return "Equalize";
    case Op::kInvert:
      return "Invert";
    case Op::kRotate:
      return "Rotate";
    case Op::kPosterize:
      return "Posterize";
    case Op::kPosterizeIncreasing:
      return "PosterizeIncreasing";
    case Op::kSolarize:
      return "Solarize";
    case Op::kSolarizeIncreasing:
      return "SolarizeIncreasing";
    case Op::kSolarizeAdd:
      return "SolarizeAdd";
    case Op::kColor:
      return "Color";
    case Op::kColorIncreasing:
      return "ColorIncreasing";
    case Op::kContrast:
      return "Contrast";
    case Op::kContrastIncreasing:
      return "ContrastIncreasing";
    case Op::kBrightness:
      return "Brightness";
    case Op::kBrightnessIncreasing:
      return "BrightnessIncreasing";
    case Op::kSharpness:
      return "Sharpness";
    case Op::kSharpnessIncreasing:
      return "SharpnessIncreasing";
    case Op::kShearX:
      return "ShearX";
    case Op::kShearY:
      return "ShearY";
    case Op::kTranslateXRel:
      return "TranslateXRel";
    case Op::kTranslateYRel:
      return "TranslateYRel";
  }
  return "?";
}

std::vector<WeightedRandAugmentOp> RandAugmentOps(const RandAugmentConfig& config) {
  if (config.op_set == RandAugmentOpSet::kWeighted) {
    return {{Op::kRotate, 3},
            {Op::kShearX, 2},
            {Op::kShearY, 2},
            {Op::kTranslateXRel, 1},
            {Op::kTranslateYRel, 1},
            {Op::kColorIncreasing, .25},
            {Op::kSharpnessIncreasing, 0.25},
            {Op::kAutoContrast, 0.25},
            {Op::kSolarizeIncreasing, .05},
            {Op::kSolarizeAdd, .05},
            {Op::kContrastIncreasing, .05},
            {Op::kBrightnessIncreasing, .05},
            {Op::kEqualize, .05},
            {Op::kPosterizeIncreasing, 0.05},
            {Op::kInvert, 0.05}};
  }
  const bool inc = config.increasing;
  std::vector<WeightedRandAugmentOp> ops;
  for (Op op :
       {Op::kAutoContrast, Op::kEqualize, Op::kInvert, Op::kRotate,
        inc ? Op::kPosterizeIncreasing : Op::kPosterize, inc ? Op::kSolarizeIncreasing : Op::kSolarize,
        Op::kSolarizeAdd, inc ? Op::kColorIncreasing : Op::kColor,
        inc ? Op::kContrastIncreasing : Op::kContrast, inc ? Op::kBrightnessIncreasing : Op::kBrightness,
        inc ? Op::kSharpnessIncreasing : Op::kSharpness, Op::kShearX, Op::kShearY, Op::kTranslateXRel,
        Op::kTranslateYRel}) {
    ops.push_back({op, 1.0});
  }
  return ops;
}

bool IsSignedRandAugmentOp(RandAugmentOp op) {
  switch (op) {
    case Op::kRotate:
    case Op::kColorIncreasing:
    case Op::kContrastIncreasing:
    case Op::kBrightnessIncreasing:
    case Op::kSharpnessIncreasing:
    case Op::kShearX:
    case Op::kShearY:
    case Op::kTranslateXRel:
    case Op::kTranslateYRel:
      return true;
    default:
      return false;
  }
}

bool IsGeometricRandAugmentOp(RandAugmentOp op) {
  return op == Op::kRotate || op == Op::kShearX || op == Op::kShearY || op == Op::kTranslateXRel ||
         op == Op::kTranslateYRel;
}

double RandAugmentArg(RandAugmentOp op, double magnitude, bool negate) {
  const double level = magnitude / kLevelDenominator;
  switch (op) {
    case Op::kAutoContrast:
    case Op::kEqualize:
    case Op::kInvert:
      return 0;
    case Op::kRotate:
      return Signed(level * 30., negate);
    case Op::kPosterize:
      return PosterizeBits(magnitude);
    case Op::kPosterizeIncreasing:
      return 4 - PosterizeBits(magnitude);
    case Op::kSolarize:
      return SolarizeThreshold(magnitude);
    case Op::kSolarizeIncreasing:
      return 256 - SolarizeThreshold(magnitude);
    case Op::kSolarizeAdd:
      return std::min(128, static_cast<int>(level * 110));
    case Op::kColor:
    case Op::kContrast:
    case Op::kBrightness:
    case Op::kSharpness:
      return Enhance(magnitude);
    case Op::kColorIncreasing:
    case Op::kContrastIncreasing:
    case Op::kBrightnessIncreasing:
    case Op::kSharpnessIncreasing:
      return EnhanceIncreasing(magnitude, negate);
    case Op::kShearX:
    case Op::kShearY:
      return Signed(level * 0.3, negate);
    case Op::kTranslateXRel:
    case Op::kTranslateYRel:
      return Signed(level * 0.45, negate);  // timm's translate_pct default.
  }
  return 0;
}

void ApplyRandAugmentOp(RandAugmentOp op, double arg, pil::Resample resample, const pil::Fill& fill,
                        Image& image) {
  switch (op) {
    case Op::kAutoContrast:
      return pil::AutoContrast(image);
    case Op::kEqualize:
      return pil::Equalize(image);
    case Op::kInvert:
      return pil::Invert(image);
    case Op::kRotate:
      image = pil::Rotate(image, arg, resample, fill);
      return;
    case Op::kPosterize:
    case Op::kPosterizeIncreasing:
      return pil::Posterize(image, static_cast<int>(arg));
    case Op::kSolarize:
    case Op::kSolarizeIncreasing:
      return pil::Solarize(image, static_cast<int>(arg));
    case Op::kSolarizeAdd:
      return pil::SolarizeAdd(image, static_cast<int>(arg));
    case Op::kColor:
    case Op::kColorIncreasing:
      return pil::Color(image, arg);
    case Op::kContrast:
    case Op::kContrastIncreasing:
      return pil::Contrast(image, arg);
    case Op::kBrightness:
    case Op::kBrightnessIncreasing:
      return pil::Brightness(image, arg);
    case Op::kSharpness:
    case Op::kSharpnessIncreasing:
      return pil::Sharpness(image, arg);
    case Op::kShearX:
      image = pil::ShearX(image, arg, resample, fill);
      return;
    case Op::kShearY:
      image = pil::ShearY(image, arg, resample, fill);
      return;
    case Op::kTranslateXRel:
      image = pil::TranslateXRel(image, arg, resample, fill);
      return;
    case Op::kTranslateYRel:
      image = pil::TranslateYRel(image, arg, resample, fill);
      return;
  }
}

}  // namespace nmsparse
