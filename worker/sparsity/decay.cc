#include "worker/sparsity/decay.h"

#include <algorithm>
#include <cmath>

namespace nmsparse {

double DecayValue(DecayType type, double beta, double j) {
  switch (type) {
    case DecayType::kStep:
      return 0.0;
    case DecayType::kLinear:
      return std::max(1.0 - beta * j, 0.0);
    case DecayType::kExp:
      return std::exp(-beta * j);
  }
  return 0.0;
}

}  // namespace nmsparse
