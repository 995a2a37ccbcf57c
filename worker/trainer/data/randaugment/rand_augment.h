// timm's RandAugment (timm.data.auto_augment.RandAugment with AugmentOp) as a step of the training pipeline,
// after RandomResizedCrop and the flips: per image, n ops drawn from the config's set (with replacement, or
// without for `tweights`), each applied with probability p at a magnitude with timm's noise and clipping, its
// sign drawn for signed ops, and geometric ops filling with the model's mean colour.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "worker/trainer/data/image_transform.h"
#include "worker/trainer/data/randaugment/pil_affine.h"
#include "schemas/rand_augment_config.h"
#include "worker/trainer/data/randaugment/rand_augment_ops.h"

namespace nmsparse {

// timm's hparams img_mean from the normalisation mean: tuple(min(255, round(255 * x))), Python's round
// (half to even).
pil::Fill RandAugmentFill(const std::array<double, 3>& mean);

// One op as drawn for one image.
struct RandAugmentDraw {
  RandAugmentOp op;
  bool applied = false;  // False when the op's probability draw skipped it.
  double magnitude = 0;  // After noise and clipping.
  double arg = 0;        // LEVEL_TO_ARG's argument, signed.
  pil::Resample resample = pil::Resample::kBicubic;
};

class RandAugment : public ImageOp {
 public:
  // `interpolation`: timm's hparams['interpolation'] when the training interpolation is fixed; nullopt draws
  // bilinear or bicubic per geometric op (train_interpolation `random`).
  RandAugment(const RandAugmentConfig& config, const pil::Fill& fill,
              std::optional<pil::Resample> interpolation);

  // The draws Apply makes for one image, in order (for tests and `nmctl validate`-style traces).
  std::vector<RandAugmentDraw> Draw(ImageRng& rng) const;
  void Apply(Image& image, ImageRng& rng) const override;
  std::string Describe() const override;

 private:
  RandAugmentOp Choose(ImageRng& rng, std::vector<bool>& taken) const;

  RandAugmentConfig config_;
  pil::Fill fill_;
  std::optional<pil::Resample> interpolation_;
  std::vector<WeightedRandAugmentOp> ops_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_RAND_AUGMENT_H_
