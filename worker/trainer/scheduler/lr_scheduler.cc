#include "worker/trainer/scheduler/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "schemas/trained_epochs.h"

namespace nmsparse {
namespace {

// timm's linear warm-up from warmup_lr_init over warmup_t, and the time a scheduler's decay sees after it.
struct Warmup {
  double lr_init = 0.0;
  double t = 0.0;  // 0: none.
  bool prefix = false;
  double step = 0.0;  // (lr - lr_init) / t, in timm's order of operations.
};

Warmup MakeWarmup(double lr, double lr_init, double t, bool prefix) {
  return Warmup{lr_init, t, prefix, t > 0 ? (lr - lr_init) / t : 0.0};
}

// A scheduler that is a function of time t (epochs, or updates with sched_on_updates): timm's Scheduler with
// _get_lr(t).
class TimedScheduler : public LrScheduler {
 public:
  TimedScheduler(double lr, Warmup warmup, bool on_updates, int64_t trained_epochs)
      : lr_(lr), warmup_(warmup), on_updates_(on_updates), trained_epochs_(trained_epochs) {}

  double At(int64_t epoch, int64_t update) const final {
    const double t = static_cast<double>(on_updates_ ? update : epoch);
    if (t < warmup_.t) return warmup_.lr_init + t * warmup_.step;
    return Decayed(warmup_.prefix ? t - warmup_.t : t);
  }
  int64_t TrainedEpochs() const final { return trained_epochs_; }

 protected:
  double lr() const { return lr_; }
  // The rate at time t after the warm-up (t counted from its end when it is a prefix).
  virtual double Decayed(double t) const = 0;

 private:
  double lr_;
  Warmup warmup_;
  bool on_updates_;
  int64_t trained_epochs_;
};

struct CosineShape {
  double t_initial = 1.0, lr_min = 0.0, k = 1.0, cycle_mul = 1.0, cycle_decay = 1.0;
  int cycle_limit = 1;
};

// timm's CosineLRScheduler: cycles of t_initial (each cycle_mul times the previous), the peak decayed by
// cycle_decay per cycle, k-decay t^k / T^k, min_lr after cycle_limit cycles.
class CosineScheduler : public TimedScheduler {
 public:
  CosineScheduler(double lr, Warmup warmup, bool on_updates, int64_t trained_epochs, CosineShape shape)
      : TimedScheduler(lr, warmup, on_updates, trained_epochs), s_(shape) {}

 private:
  double Decayed(double t) const override {
    double i, t_i, t_curr;
    if (s_.cycle_mul != 1.0) {
      i = std::floor(std::log(1 - t / s_.t_initial * (1 - s_.cycle_mul)) / std::log(s_.cycle_mul));
      t_i = std::pow(s_.cycle_mul, i) * s_.t_initial;
      t_curr = t - (1 - std::pow(s_.cycle_mul, i)) / (1 - s_.cycle_mul) * s_.t_initial;
    } else {
      i = std::floor(t / s_.t_initial);
      t_i = s_.t_initial;
      t_curr = t - s_.t_initial * i;
    }
    if (i >= s_.cycle_limit) return s_.lr_min;
    const double lr_max = lr() * std::pow(s_.cycle_decay, i);
    return s_.lr_min +
           0.5 * (lr_max - s_.lr_min) * (1 + std::cos(M_PI * std::pow(t_curr, s_.k) / std::pow(t_i, s_.k)));
  }

  CosineShape s_;
};

// timm's StepLRScheduler: lr * decay_rate^floor(t / decay_t) (constant: decay_t 1, decay_rate 1).
class StepScheduler : public TimedScheduler {
 public:
  StepScheduler(double lr, Warmup warmup, bool on_updates, int64_t trained_epochs, double decay_t,
                double rate)
      : TimedScheduler(lr, warmup, on_updates, trained_epochs), decay_t_(decay_t), rate_(rate) {}

 private:
  double Decayed(double t) const override { return lr() * std::pow(rate_, std::floor(t / decay_t_)); }

  double decay_t_, rate_;
};

// timm's MultiStepLRScheduler: lr * decay_rate^(milestones <= t + 1), timm's bisect_right(decay_t, t + 1).
class MultiStepScheduler : public TimedScheduler {
 public:
  MultiStepScheduler(double lr, Warmup warmup, bool on_updates, int64_t trained_epochs,
                     std::vector<double> milestones, double rate)
      : TimedScheduler(lr, warmup, on_updates, trained_epochs),
        milestones_(std::move(milestones)),
        rate_(rate) {}

 private:
  double Decayed(double t) const override {
    const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), t + 1) - milestones_.begin();
    return lr() * std::pow(rate_, static_cast<double>(passed));
  }

  std::vector<double> milestones_;
  double rate_;
};

// timm's PlateauLRScheduler (per epoch): the warm-up up to and including epoch warmup_t, then torch's
// ReduceLROnPlateau in mode max on top-1 (threshold 1e-4 relative, eps 1e-8, and the cooldown timm's
// create_scheduler_v2 passes: 0 epochs).
class PlateauScheduler : public LrScheduler {
 public:
  PlateauScheduler(double lr, Warmup warmup, double decay_rate, int patience, double lr_min, int64_t epochs)
      : warmup_(warmup),
        decay_rate_(decay_rate),
        patience_(patience),
        lr_min_(lr_min),
        epochs_(epochs),
        current_(warmup.t > 0 ? warmup.lr_init : lr) {}

  double At(int64_t /*epoch*/, int64_t /*update*/) const override { return current_; }
  int64_t TrainedEpochs() const override { return epochs_; }

  void EndEpoch(int64_t epoch, double top1) override {
    const double next = static_cast<double>(epoch + 1);
    if (next <= warmup_.t) {
      current_ = warmup_.lr_init + next * warmup_.step;
      return;
    }
    constexpr double kThreshold = 1e-4, kEps = 1e-8;
    if (top1 > best_ * (1.0 + kThreshold)) {
      best_ = top1;
      bad_epochs_ = 0;
    } else {
      ++bad_epochs_;
    }
    if (cooldown_counter_ > 0) {  // torch: epochs in cooldown are not bad epochs.
      --cooldown_counter_;
      bad_epochs_ = 0;
    }
    if (bad_epochs_ > patience_) {
      const double reduced = std::max(current_ * decay_rate_, lr_min_);
      if (current_ - reduced > kEps) current_ = reduced;
      cooldown_counter_ = kCooldown;
      bad_epochs_ = 0;
    }
  }

  std::vector<double> State() const override {
    return {best_, static_cast<double>(bad_epochs_), static_cast<double>(cooldown_counter_), current_};
  }

  void LoadState(const std::vector<double>& state) override {
    if (state.empty()) return;
    if (state.size() != 4) {
      throw std::invalid_argument("the checkpoint's plateau scheduler state has " +
                                  std::to_string(state.size()) + " values, not 4");
    }
    best_ = state[0];
    bad_epochs_ = static_cast<int>(state[1]);
    cooldown_counter_ = static_cast<int>(state[2]);
    current_ = state[3];
  }

 private:
  static constexpr int kCooldown = 0;  // scheduler_factory.py: PlateauLRScheduler(cooldown_t=0).
  Warmup warmup_;
  double decay_rate_;
  int patience_;
  double lr_min_;
  int64_t epochs_;
  double current_;
  double best_ = -HUGE_VAL;
  int bad_epochs_ = 0;
  int cooldown_counter_ = 0;
};

CosineShape CosineShapeOf(const ScheduleConfig& s, double t_initial) {
  CosineShape shape;
  shape.t_initial = t_initial;
  shape.lr_min = s.min_lr;
  shape.k = s.lr_k_decay;
  shape.cycle_mul = s.lr_cycle_mul;
  shape.cycle_decay = s.lr_cycle_decay;
  shape.cycle_limit = s.lr_cycle_limit;
  return shape;
}

// nmsparse's own cosine: per update, the warm-up (whole updates) inside `epochs`, the cosine over the rest:
// timm's cosine with warmup_prefix over epochs * updates - warm-up updates.
std::unique_ptr<LrScheduler> MakeWarmupCosine(const ScheduleConfig& s, double lr, int64_t updates) {
  const int64_t warmup_updates = std::llround(s.warmup_epochs * static_cast<double>(updates));
  const Warmup warmup = MakeWarmup(lr, s.warmup_lr, static_cast<double>(warmup_updates), /*prefix=*/true);
  const CosineShape shape =
      CosineShapeOf(s, static_cast<double>(std::max<int64_t>(s.epochs * updates - warmup_updates, 1)));
  return std::make_unique<CosineScheduler>(lr, warmup, /*on_updates=*/true, TrainedEpochs(s), shape);
}

}  // namespace

std::unique_ptr<LrScheduler> MakeLrScheduler(const ScheduleConfig& s, double lr, int64_t updates_per_epoch) {
  const int64_t updates = std::max<int64_t>(updates_per_epoch, 1);
  if (s.sched == "warmup_cosine") return MakeWarmupCosine(s, lr, updates);
  // create_scheduler_v2: times in epochs, or in updates with sched_on_updates.
  const double per = s.sched_on_updates ? static_cast<double>(updates) : 1.0;
  const Warmup warmup = MakeWarmup(lr, s.warmup_lr, s.warmup_epochs * per, s.warmup_prefix);
  const int64_t trained = TrainedEpochs(s);
  const bool on = s.sched_on_updates;
  if (s.sched == "cosine") {
    const CosineShape shape = CosineShapeOf(s, s.epochs * per);
    return std::make_unique<CosineScheduler>(lr, warmup, on, trained, shape);
  }
  if (s.sched == "step") {
    return std::make_unique<StepScheduler>(lr, warmup, on, trained, s.decay_epochs * per, s.decay_rate);
  }
  if (s.sched == "constant") return std::make_unique<StepScheduler>(lr, warmup, on, trained, 1.0, 1.0);
  if (s.sched == "multistep") {
    std::vector<double> milestones;
    for (int m : s.decay_milestones) milestones.push_back(m * per);
    return std::make_unique<MultiStepScheduler>(lr, warmup, on, trained, std::move(milestones), s.decay_rate);
  }
  // plateau (the spec's key table admits no other value).
  return std::make_unique<PlateauScheduler>(lr, MakeWarmup(lr, s.warmup_lr, s.warmup_epochs, false),
                                            s.decay_rate, s.patience_epochs, s.min_lr, trained);
}

}  // namespace nmsparse
