// When nmtrain's next progress line is due (contract::kKindProgress): at the first step, then once
// `interval_s` of wall time has passed since the last. Reads the host clock only, never a device value.
#ifndef NMSPARSE_WORKER_TRAINER_METRICS_PROGRESS_TICKER_H_
#define NMSPARSE_WORKER_TRAINER_METRICS_PROGRESS_TICKER_H_

#include <chrono>
#include <optional>

namespace nmsparse {

class ProgressTicker {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ProgressTicker(double interval_s) : interval_(interval_s) {}

  // True when a line is due at `now`; a true answer starts the next interval.
  bool Due(Clock::time_point now = Clock::now());
  // Another line (a step line) just said as much: the next progress line waits a full interval.
  void Reset(Clock::time_point now = Clock::now()) { last_ = now; }

 private:
  std::chrono::duration<double> interval_;
  std::optional<Clock::time_point> last_;
};

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_METRICS_PROGRESS_TICKER_H_
