// Sparsity locations (docs/sparsity-method.md §5): their names, the sparsity_loc text, and the N:M each uses.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/sparsity_config.h"

namespace nmsparse {

const EnumTable<SparsityLocation>& SparsityLocations() {
  static const auto* names = new EnumTable<SparsityLocation>{
      {"FF", SparsityLocation::kFF}, {"Q", SparsityLocation::kQ}, {"K", SparsityLocation::kK},
      {"V", SparsityLocation::kV},   {"O", SparsityLocation::kO}, {"C", SparsityLocation::kC}};
  return *names;
}

std::string ToString(SparsityLocation location) { return SparsityLocations().Name(location); }

bool SparsityConfig::HasLocation(SparsityLocation loc) const {
  return std::find(locations.begin(), locations.end(), loc) != locations.end();
}

absl::StatusOr<std::vector<SparsityLocation>> ParseSparsityLocations(const std::string& text) {
  const std::string upper = absl::AsciiStrToUpper(text);
  std::set<SparsityLocation> found;
  for (size_t i = 0; i < upper.size();) {
    const char c = upper[i];
    if (c == ',' || c == '+' || c == ' ' || c == '\t' || c == '|' || c == '/') {
      ++i;
      continue;
    }
    bool matched = false;
    for (const auto& [name, loc] : SparsityLocations().entries()) {  // FF before the one-letter names.
      if (upper.compare(i, name.size(), name) == 0) {
        found.insert(loc);
        i += name.size();
        matched = true;
        break;
      }
    }
    if (!matched) {
      return absl::InvalidArgumentError(
          absl::StrCat("value '", text, "' is not a set of locations: must be letters/words over ",
                       absl::StrJoin(SparsityLocations().Names(), ", "), " (e.g. FF, FFQKV, FF,Q,K,V)"));
    }
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("value '", text,
                                                   "' names no location: must name at least one of ",
                                                   absl::StrJoin(SparsityLocations().Names(), ", ")));
  }
  std::vector<SparsityLocation> out;
  for (const auto& [name, loc] : SparsityLocations().entries()) {
    if (found.count(loc)) out.push_back(loc);
  }
  return out;
}

std::string SparsityLocationsToString(const std::vector<SparsityLocation>& locations) {
  std::vector<std::string> names;
  for (const auto& [name, loc] : SparsityLocations().entries()) {
    if (std::find(locations.begin(), locations.end(), loc) != locations.end()) names.push_back(name);
  }
  return absl::StrJoin(names, ",");
}

NM TargetFor(const SparsityConfig& config, SparsityLocation location) {
  const bool qkv = location == SparsityLocation::kQ || location == SparsityLocation::kK ||
                   location == SparsityLocation::kV;
  return qkv ? config.nm_qkv : config.nm;
}

}  // namespace nmsparse
