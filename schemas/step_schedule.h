// Step-aware hyperparameters of dynamic sparsity (docs/sparsity-method.md §7): a value as a
// function of the optimizer step, clamped to [0, 1]; its YAML keys are UpdateScheduleKeys'. Plain C++ (no
// LibTorch, no protobuf).
//
//   0.9                                                       # constant
//   {type: linear, start_value: 0, end_value: 0.9, start_step: 100, end_step: 1000}
//   {type: cosine, start_value: 0.3, end_value: 0, end_step: 5000}   # RigL's drop fraction
//   {type: power, start_value: 0, end_value: 0.9, end_step: 5000, exponent: 3}   # GMP (Zhu & Gupta)
//   {type: exp, start_value: 0.3, decay: 0.999, start_step: 0, end_step: 0}      # end_step 0: no end
//   {type: cycle, start_step: 0, cycle: [{type: linear, ...}, {type: constant, value: 0.5, end_step: 100}]}
//
// linear/cosine/power move from start_value at start_step to end_value at end_step (t = progress in [0, 1]):
// linear s + (e - s) t; cosine e + (s - e) (1 + cos(pi t)) / 2; power e + (s - e) (1 - t)^exponent. exp:
// start_value * decay^(min(step, end_step) - start_step) from start_step on. cycle: its schedules taken in
// turn from the cycle's start_step, child i lasting end_step - start_step of its own steps (evaluated at its
// own start_step + offset), repeating forever.
#ifndef NMSPARSE_SCHEMAS_STEP_SCHEDULE_H_
#define NMSPARSE_SCHEMAS_STEP_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/enum_table.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

template <typename S>
class KeyTable;

struct StepSchedule {
  enum class Type { kConstant, kLinear, kExp, kCosine, kPower, kCycle };
  Type type = Type::kConstant;
  double value = 0.0;  // CONSTANT.
  double start_value = 0.0;
  double end_value = 0.0;
  int64_t start_step = 0;
  int64_t end_step = 0;
  double exponent = 0.0;  // POWER (3 when not given).
  double decay = 0.0;     // EXP: multiplier per step.
  std::vector<StepSchedule> cycle;

  static StepSchedule Constant(double v) {
    StepSchedule s;
    s.value = v;
    return s;
  }
};

bool operator==(const StepSchedule& a, const StepSchedule& b);
inline bool operator!=(const StepSchedule& a, const StepSchedule& b) { return !(a == b); }

// The value at optimizer step `step` (0-based), clamped to [0, 1].
double ScheduleValue(const StepSchedule& schedule, int64_t step);

// A number (constant) or a map {type: ..., ...} (type defaults to constant; names case-insensitive).
// Fractions (value, start_value, end_value) must be in [0, 1]; keys that do not apply to the type must be 0
// or absent. Errors are InvalidArgument "line L: path.key: value V is ...: must be ...".
absl::StatusOr<StepSchedule> ParseStepSchedule(const YAML::Node& node, const std::string& path);

// Canonical flow map with every scalar key of v1.Schedule (`cycle` only for CYCLE); parses back equal.
YAML::Node StepScheduleToYaml(const StepSchedule& schedule);

// "0.9", "linear 0->0.9 over [100, 1000)", ...: for listings.
std::string DescribeSchedule(const StepSchedule& schedule);

// The schedule types (parse and print) and the keys of a schedule map, in canonical order.
const EnumTable<StepSchedule::Type>& StepScheduleTypes();
const KeyTable<StepSchedule>& StepScheduleKeys();

std::string ToString(StepSchedule::Type type);

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_STEP_SCHEDULE_H_
