#include "schemas/rand_augment_config.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace nmsparse {
namespace {

absl::Status BadSection(absl::string_view config, absl::string_view section, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("RandAugment config '", config, "': section '", section, "' ", why));
}

// Python's int(): digits only here, since timm's value starts at the section's first digit.
bool ParseInt(absl::string_view text, int& out) {
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !text.empty() && text.size() <= 9 && absl::SimpleAtoi(text, &out);
}

bool ParseFloat(absl::string_view text, double& out) {
  return absl::SimpleAtod(text, &out) && std::isfinite(out);
}

}  // namespace

absl::StatusOr<RandAugmentConfig> ParseRandAugmentConfig(absl::string_view config) {
  std::vector<absl::string_view> sections = absl::StrSplit(config, '-');
  if (sections[0] != "rand") {
    return absl::InvalidArgumentError(absl::StrCat(
        "RandAugment config '", config, "' must start with 'rand-' (timm's rand_augment_transform)"));
  }
  RandAugmentConfig out;
  bool mstd_set = false;
  bool mmax_set = false;
  for (size_t i = 1; i < sections.size(); ++i) {
    absl::string_view section = sections[i];
    if (!section.empty() && section[0] == 't') {
      absl::string_view name = section.substr(1);
      if (name == "weights") {
        out.op_set = RandAugmentOpSet::kWeighted;
      } else if (name == "3a" || name == "3aw") {
        return absl::UnimplementedError(absl::StrCat("RandAugment config '", config, "': section '", section,
                                                     "' (3-Augment's op set) is not implemented"));
      } else {
        return BadSection(config, section, "names no op set timm knows (tweights)");
      }
      continue;
    }
    size_t digit = section.find_first_of("0123456789");
    if (digit == absl::string_view::npos) {
      return BadSection(config, section, "has no number (sections are m, n, p, mstd, mmax, inc, t)");
    }
    absl::string_view key = section.substr(0, digit);
    absl::string_view value = section.substr(digit);
    bool ok = true;
    if (key == "mstd") {
      double mstd = 0;
      ok = ParseFloat(value, mstd);
      // timm: mstd > 100 means uniform sampling in [0, m].
      if (ok && !mstd_set) out.magnitude_std = mstd > 100 ? std::numeric_limits<double>::infinity() : mstd;
      mstd_set = true;
    } else if (key == "mmax") {
      int mmax = 0;
      ok = ParseInt(value, mmax);
      if (ok && !mmax_set) out.magnitude_max = mmax;
      mmax_set = true;
    } else if (key == "inc") {
      int inc = 0;
      ok = ParseInt(value, inc);
      if (ok && inc != 0 && inc != 1) return BadSection(config, section, "is not inc0 or inc1");
      out.increasing = inc != 0;
    } else if (key == "m") {
      ok = ParseInt(value, out.magnitude);
    } else if (key == "n") {
      ok = ParseInt(value, out.num_layers);
      if (ok && out.num_layers > kMaxRandAugmentLayers) {
        return BadSection(config, section,
                          absl::StrCat("asks for more than ", kMaxRandAugmentLayers, " ops"));
      }
    } else if (key == "p") {
      ok = ParseFloat(value, out.prob);
      if (ok && (out.prob < 0 || out.prob > 1)) {
        return BadSection(config, section, "is not a probability in [0, 1]");
      }
    } else {
      return BadSection(config, section, "is unknown (sections are m, n, p, mstd, mmax, inc, t)");
    }
    if (!ok)
      return BadSection(config, section, absl::StrCat("has a value '", value, "' that is not a number"));
  }
  if (out.op_set == RandAugmentOpSet::kWeighted && out.num_layers > 15) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RandAugment config '", config, "': tweights draws without replacement from 15 ops, n > 15"));
  }
  return out;
}

}  // namespace nmsparse
