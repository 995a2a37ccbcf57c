#include "schemas/trained_epochs.h"

#include <algorithm>
#include <cmath>

namespace nmsparse {
namespace {

// timm's CosineLRScheduler.get_cycle_length(cycle_limit) in epochs: cycles of `epochs`, each lr_cycle_mul
// times the previous, floored as timm does.
double CosineCycleEpochs(const ScheduleConfig& s) {
  const int cycles = std::max(1, s.lr_cycle_limit);
  const double t_initial = s.epochs;
  if (s.lr_cycle_mul == 1.0) return t_initial * cycles;
  return std::floor(-t_initial * (std::pow(s.lr_cycle_mul, cycles) - 1) / (1 - s.lr_cycle_mul));
}

}  // namespace

int TrainedEpochs(const ScheduleConfig& s) {
  if (s.sched == "warmup_cosine") return s.epochs + s.cooldown_epochs;
  if (s.sched == "cosine") {
    const double prefix = s.warmup_prefix ? s.warmup_epochs : 0.0;
    return static_cast<int>(std::floor(CosineCycleEpochs(s) + prefix + s.cooldown_epochs));
  }
  // Without a cycle length num_epochs is epochs and a prefixed warm-up; cooldown_epochs does not count.
  return s.epochs + (s.warmup_prefix ? static_cast<int>(s.warmup_epochs) : 0);
}

int SparsityEpochs(const ScheduleConfig& s) { return s.epochs; }

}  // namespace nmsparse
