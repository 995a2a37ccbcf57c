#include "schemas/sparsity_config.h"

#include <algorithm>

namespace nmsparse {

bool SparsityConfig::HasLocation(SparsityLocation loc) const {
  return std::find(locations.begin(), locations.end(), loc) != locations.end();
}

std::string ToString(SparsityType type) {
  switch (type) {
    case SparsityType::kDense:
      return "DENSE";
    case SparsityType::kStructuredNM:
      return "STRUCTURED_NM";
    case SparsityType::kSrste:
      return "SRSTE";
    case SparsityType::kUnstructured:
      return "UNSTRUCTURED";
  }
  return "?";
}

std::string ToString(DecayType type) {
  switch (type) {
    case DecayType::kStep:
      return "STEP";
    case DecayType::kLinear:
      return "LINEAR";
    case DecayType::kExp:
      return "EXP";
  }
  return "?";
}

std::string ToString(StructureDecayType type) {
  switch (type) {
    case StructureDecayType::kSparsify:
      return "SPARSIFY";
    case StructureDecayType::kFine:
      return "FINE";
    case StructureDecayType::kDensify:
      return "DENSIFY";
  }
  return "?";
}

std::string ToString(SparsityLocation location) {
  switch (location) {
    case SparsityLocation::kFF:
      return "FF";
    case SparsityLocation::kQ:
      return "Q";
    case SparsityLocation::kK:
      return "K";
    case SparsityLocation::kV:
      return "V";
    case SparsityLocation::kO:
      return "O";
    case SparsityLocation::kC:
      return "C";
  }
  return "?";
}

}  // namespace nmsparse
