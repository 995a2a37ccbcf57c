#include "schemas/rand_augment_config.h"

#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace nmsparse {
namespace {

absl::Status Bad(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "auto_augment '%s': %s (timm's grammar: rand-m{M}-n{N}-mstd{S}-mmax{X}-inc{0,1}-p{P})", text, why));
}

}  // namespace

absl::StatusOr<RandAugmentConfig> ParseRandAugment(const std::string& text) {
  const std::vector<std::string> sections = absl::StrSplit(text, '-');
  if (sections[0] != "rand") return Bad(text, "only RandAugment ('rand-...') is implemented");
  RandAugmentConfig config;
  for (size_t i = 1; i < sections.size(); ++i) {
    const std::string& s = sections[i];
    // timm splits each section at its first digit: the name before, the value from there.
    const size_t digit = s.find_first_of("0123456789");
    const std::string name = s.substr(0, digit);
    const std::string value = digit == std::string::npos ? "" : s.substr(digit);
    int integer = 0;
    double number = 0;
    const bool is_int = absl::SimpleAtoi(value, &integer) && integer >= 0;
    const bool is_number = absl::SimpleAtod(value, &number) && number >= 0;
    if (name == "m" && is_int) {
      config.magnitude = integer;
    } else if (name == "n" && is_int) {
      config.num_layers = integer;
    } else if (name == "mstd" && is_number) {
      config.magnitude_std = number > 100 ? std::numeric_limits<double>::infinity() : number;
    } else if (name == "mmax" && is_int) {
      config.magnitude_max = integer;
    } else if (name == "inc" && is_int && integer <= 1) {
      config.increasing = integer == 1;
    } else if (name == "p" && is_number && number <= 1) {
      config.prob = number;
    } else {
      return Bad(text,
                 "section '" + s + "' is not one of m{int} n{int} mstd{number} mmax{int} inc{0,1} p{0..1}");
    }
  }
  return config;
}

std::string DescribeRandAugment(const RandAugmentConfig& c) {
  return absl::StrFormat("RandAugment(m=%d, n=%d, mstd=%g, mmax=%d, inc=%d, p=%g)", c.magnitude, c.num_layers,
                         c.magnitude_std, c.magnitude_max, c.increasing ? 1 : 0, c.prob);
}

}  // namespace nmsparse
