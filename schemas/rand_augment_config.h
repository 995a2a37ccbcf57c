// timm's RandAugment config string (timm.data.auto_augment.rand_augment_transform, timm 1.0.31), e.g. the
// paper's `rand-m15-n2-p1-mstd0`. Only Abseil: the spec's `aa` is validated, and RandAugment built, from the
// same parse.
#ifndef NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_
#define NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_

#include <limits>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nmsparse {

// timm's op sets (section `t`): the plain or increasing list, or `tweights` (_RAND_WEIGHTED_0, drawn without
// replacement).
enum class RandAugmentOpSet { kDefault, kWeighted };

// More ops per image than any recipe uses; bounds the work one image can ask for.
inline constexpr int kMaxRandAugmentLayers = 16;

struct RandAugmentConfig {
  int magnitude = 10;        // `m`: the op strength on timm's 0..10 scale (_LEVEL_DENOM).
  int num_layers = 2;        // `n`: ops drawn per image.
  double prob = 0.5;         // `p`: each drawn op applies with this probability.
  double magnitude_std = 0;  // `mstd`: Gaussian noise on m; infinity (mstd > 100) draws m in [0, m].
  int magnitude_max = 0;     // `mmax`: clip the noisy m to [0, mmax]; 0 keeps timm's default of 10.
  bool increasing = false;   // `inc1`: the ops whose severity grows with m (_RAND_INCREASING_TRANSFORMS).
  RandAugmentOpSet op_set = RandAugmentOpSet::kDefault;

  // The upper clip of a drawn magnitude (timm: `magnitude_max or _LEVEL_DENOM`).
  double UpperBound() const { return magnitude_max > 0 ? magnitude_max : 10.0; }
  bool uniform_magnitude() const { return magnitude_std == std::numeric_limits<double>::infinity(); }
};

// Parses `rand-<section>-<section>...` as timm does: sections in any order; numeric sections are a key up to
// the first digit and a value (m, n, mstd, mmax, inc, p); `t<name>` picks the op set. Where timm repeats
// hparams.setdefault (mstd, mmax) the first occurrence wins, elsewhere the last. Stricter than timm where
// timm silently ignores text: a section without a number, an empty section, an unknown op set name, or a
// number that does not parse is InvalidArgument naming the section. `t3a` / `t3aw` (3-Augment's blur and
// desaturation) are Unimplemented.
absl::StatusOr<RandAugmentConfig> ParseRandAugmentConfig(absl::string_view config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_
