#include "worker/trainer/metrics/progress_ticker.h"

namespace nmsparse {

bool ProgressTicker::Due(Clock::time_point now) {
  if (last_.has_value() && now - *last_ < interval_) return false;
  last_ = now;
  return true;
}

}  // namespace nmsparse
