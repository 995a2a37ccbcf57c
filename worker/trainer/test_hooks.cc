#include "worker/trainer/test_hooks.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <ostream>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"

namespace nmsparse {

absl::Status ReadHoldFromEnvironment(TrainerTestHooks* hooks) {
  const char* hold = std::getenv("NMTRAIN_HOLD_FILE");
  if (hold == nullptr || *hold == '\0') return absl::OkStatus();
  const char* epochs = std::getenv("NMTRAIN_HOLD_AFTER_EPOCHS");
  const char* steps = std::getenv("NMTRAIN_HOLD_AFTER_STEPS");
  const bool by_epochs = epochs != nullptr && absl::SimpleAtoi(epochs, &hooks->hold_after_epochs) &&
                         hooks->hold_after_epochs >= 1;
  const bool by_steps =
      steps != nullptr && absl::SimpleAtoi(steps, &hooks->hold_after_steps) && hooks->hold_after_steps >= 1;
  if (!by_epochs && !by_steps) {
    return absl::InvalidArgumentError(
        "NMTRAIN_HOLD_FILE needs NMTRAIN_HOLD_AFTER_EPOCHS=N or NMTRAIN_HOLD_AFTER_STEPS=N >= 1");
  }
  hooks->hold_file = hold;
  return absl::OkStatus();
}

HoldPoint::HoldPoint(const TrainerTestHooks& hooks, std::function<bool()> stop_wanted,
                     std::function<std::ostream&()> log)
    : hooks_(hooks), stop_wanted_(std::move(stop_wanted)), log_(std::move(log)) {}

void HoldPoint::AfterEpochs(int epochs_done) const {
  if (epochs_done == hooks_.hold_after_epochs) Hold(std::to_string(epochs_done) + " epochs");
}

void HoldPoint::AfterSteps(int64_t global_step) const {
  if (hooks_.hold_after_steps > 0 && global_step == hooks_.hold_after_steps)
    Hold(std::to_string(global_step) + " steps");
}

void HoldPoint::Hold(const std::string& after) const {
  struct stat st;
  const auto held = [&] { return stat(hooks_.hold_file.c_str(), &st) == 0 && !stop_wanted_(); };
  if (hooks_.hold_file.empty() || !held()) return;
  log_() << "holding after " << after << " while " << hooks_.hold_file << " exists\n";
  while (held()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  log_() << "hold released\n";
}

}  // namespace nmsparse
