// timm's RandAugment config string (timm.data.auto_augment.rand_augment_transform), e.g. the reference's
// "rand-m15-n2-p1-mstd0": "rand", then sections m{magnitude} n{ops per image} mstd{magnitude noise std}
// mmax{magnitude cap} inc{0|1} p{op probability}, in any order, separated by '-'. Plain C++, so that specs
// are checked where they are parsed; the trainer's RandAugment reads the same struct.
#ifndef NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_
#define NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse {

// timm's defaults where a section is absent.
struct RandAugmentConfig {
  int magnitude = 10;
  int num_layers = 2;
  double magnitude_std = 0.0;  // Infinity (mstd > 100): magnitudes uniform in [0, magnitude_max].
  int magnitude_max = 10;      // timm's _LEVEL_DENOM when unset.
  bool increasing = false;
  double prob = 0.5;
};

// InvalidArgument naming the string and the section at fault.
absl::StatusOr<RandAugmentConfig> ParseRandAugment(const std::string& text);

// The config in words: "RandAugment(m=15, n=2, mstd=0, mmax=10, inc=0, p=1)".
std::string DescribeRandAugment(const RandAugmentConfig& config);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_RAND_AUGMENT_CONFIG_H_
