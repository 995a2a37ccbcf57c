#include "schemas/step_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/spec_key_builders.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using Type = StepSchedule::Type;
using yaml_util::Error;

constexpr double kPi = 3.14159265358979323846;

// Keys that mean something for a type (besides `type`).
std::vector<std::string> RelevantKeys(Type type) {
  switch (type) {
    case Type::kConstant:  // The step window matters inside a cycle.
      return {"value", "start_step", "end_step"};
    case Type::kLinear:
    case Type::kCosine:
      return {"start_value", "end_value", "start_step", "end_step"};
    case Type::kPower:
      return {"start_value", "end_value", "start_step", "end_step", "exponent"};
    case Type::kExp:
      return {"start_value", "start_step", "end_step", "decay"};
    case Type::kCycle:
      return {"start_step", "cycle"};
  }
  return {};
}

double Progress(const StepSchedule& s, int64_t step) {
  if (step <= s.start_step) return 0.0;
  if (step >= s.end_step) return 1.0;
  return static_cast<double>(step - s.start_step) / static_cast<double>(s.end_step - s.start_step);
}

double Raw(const StepSchedule& s, int64_t step) {
  switch (s.type) {
    case Type::kConstant:
      return s.value;
    case Type::kLinear:
      return s.start_value + (s.end_value - s.start_value) * Progress(s, step);
    case Type::kCosine:
      return s.end_value + (s.start_value - s.end_value) * 0.5 * (1.0 + std::cos(kPi * Progress(s, step)));
    case Type::kPower:
      return s.end_value + (s.start_value - s.end_value) * std::pow(1.0 - Progress(s, step), s.exponent);
    case Type::kExp: {
      const int64_t last = s.end_step > 0 ? std::min(step, s.end_step) : step;
      return s.start_value *
             std::pow(s.decay, static_cast<double>(std::max<int64_t>(0, last - s.start_step)));
    }
    case Type::kCycle: {
      int64_t period = 0;
      for (const StepSchedule& c : s.cycle) period += c.end_step - c.start_step;
      if (s.cycle.empty() || period <= 0) return 0.0;
      int64_t offset = std::max<int64_t>(0, step - s.start_step) % period;
      for (const StepSchedule& c : s.cycle) {
        const int64_t length = c.end_step - c.start_step;
        if (offset < length) return Raw(c, c.start_step + offset);
        offset -= length;
      }
      return 0.0;
    }
  }
  return 0.0;
}

std::string Fmt(double v) { return yaml_util::FormatDouble(v); }

// The node of `key` in a map (for its line), else the node itself.
YAML::Node At(const YAML::Node& node, const std::string& key) {
  if (node.IsMap() && node[key]) return node[key];
  return node;
}

absl::Status CheckRange(const YAML::Node& node, const std::string& path, int64_t start, int64_t end,
                        bool end_required) {
  if (end_required ? end <= start : (end != 0 && end <= start)) {
    return Error(node, path + ".end_step",
                 absl::StrCat("value ", end, " is out of range: must be > start_step (", start, ")",
                              end_required ? "" : " or 0 (no end)"));
  }
  return absl::OkStatus();
}

absl::Status CheckSchedule(const StepSchedule& s, const YAML::Node& node, const std::string& path) {
  switch (s.type) {
    case Type::kConstant:
      return absl::OkStatus();
    case Type::kLinear:
    case Type::kCosine:
    case Type::kPower:
      if (s.type == Type::kPower && s.exponent <= 0.0) {
        return Error(At(node, "exponent"), path + ".exponent",
                     "value " + Fmt(s.exponent) + " is out of range: must be > 0");
      }
      return CheckRange(At(node, "end_step"), path, s.start_step, s.end_step, true);
    case Type::kExp:
      if (s.decay <= 0.0) {
        return Error(At(node, "decay"), path + ".decay",
                     "value " + Fmt(s.decay) + " is out of range: an exp schedule needs decay > 0");
      }
      return CheckRange(At(node, "end_step"), path, s.start_step, s.end_step, false);
    case Type::kCycle:
      if (s.cycle.empty()) return Error(node, path + ".cycle", "missing: a cycle needs a list of schedules");
      for (size_t i = 0; i < s.cycle.size(); ++i) {
        const StepSchedule& c = s.cycle[i];
        const YAML::Node child = node["cycle"][i];
        if (c.type == Type::kCycle) {
          return Error(child, absl::StrCat(path, ".cycle[", i, "]"), "a cycle cannot contain a cycle");
        }
        if (auto st = CheckRange(At(child, "end_step"), absl::StrCat(path, ".cycle[", i, "]"), c.start_step,
                                 c.end_step, true);
            !st.ok()) {
          return st;
        }
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

bool IsZero(const YAML::Node& value) {
  if (yaml_util::IsNullish(value)) return true;
  if (value.IsSequence()) return value.size() == 0;
  if (!value.IsScalar()) return false;
  double v = 1.0;
  return YAML::convert<double>::decode(value, v) && v == 0.0;
}

absl::StatusOr<std::vector<StepSchedule>> ReadCycle(const YAML::Node& value, const std::string& path) {
  return ReadList<StepSchedule>(value, path, "schedules", ParseStepSchedule);
}

void WriteCycle(const std::vector<StepSchedule>& cycle, const KeyInfo& self, SpecWriter* out) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const StepSchedule& c : cycle) list.push_back(StepScheduleToYaml(c));
  out->Collection(self, list);
}

// cycle: a list of schedules, written for CYCLE only.
SpecKey<StepSchedule> CycleKey() {
  SpecKey<StepSchedule> key = MemberKey<StepSchedule, std::vector<StepSchedule>>(
      "cycle", KeyKind::kScheduleList, &StepSchedule::cycle, ReadCycle, WriteCycle);
  auto write = key.write;
  key.write = [write](const StepSchedule& s, const KeyInfo& self, SpecWriter* out) {
    if (s.type == Type::kCycle) write(s, self, out);
  };
  return key;
}

using S = StepSchedule;
constexpr int64_t kMaxStep = std::numeric_limits<int64_t>::max();

}  // namespace

const EnumTable<StepSchedule::Type>& StepScheduleTypes() {
  static const auto* types =
      new EnumTable<Type>{{"CONSTANT", Type::kConstant}, {"LINEAR", Type::kLinear}, {"EXP", Type::kExp},
                          {"COSINE", Type::kCosine},     {"POWER", Type::kPower},   {"CYCLE", Type::kCycle}};
  return *types;
}

const KeyTable<StepSchedule>& StepScheduleKeys() {
  static const auto* keys = new KeyTable<S>({
      EnumKey<S>("type", &S::type, StepScheduleTypes()).Doc("Case-insensitive; canonical form upper case."),
      NumberKey<S>("value", &S::value, 0.0, 1.0).Doc("CONSTANT."),
      NumberKey<S>("start_value", &S::start_value, 0.0, 1.0),
      NumberKey<S>("end_value", &S::end_value, 0.0, 1.0),
      IntKey<S>("start_step", &S::start_step, 0, kMaxStep),
      IntKey<S>("end_step", &S::end_step, 0, kMaxStep),
      NumberKey<S>("exponent", &S::exponent, 0.0).Doc("POWER (default 3, Zhu & Gupta)."),
      NumberKey<S>("decay", &S::decay, 0.0).Doc("EXP: multiplier per step (> 0)."),
      CycleKey().Doc("CYCLE: schedules taken in turn; each needs end_step > start_step."),
  });
  return *keys;
}

bool operator==(const StepSchedule& a, const StepSchedule& b) { return StepScheduleKeys().Equal(a, b); }

double ScheduleValue(const StepSchedule& schedule, int64_t step) {
  const double v = Raw(schedule, step);
  if (std::isnan(v)) return 0.0;
  return std::clamp(v, 0.0, 1.0);
}

absl::StatusOr<StepSchedule> ParseStepSchedule(const YAML::Node& node, const std::string& path) {
  StepSchedule s;
  if (node.IsScalar()) {
    auto v = yaml_util::ReadDouble(node, path, 0.0, 1.0);
    if (!v.ok()) return v.status();
    s.value = *v;
    return s;
  }
  if (!node.IsMap()) {
    return Error(node, path,
                 "value " + yaml_util::Describe(node) +
                     " is not a schedule: expected a number in [0, 1] or {type: constant|linear|exp|cosine|"
                     "power|cycle, ...}");
  }
  const KeyTable<StepSchedule>& keys = StepScheduleKeys();
  if (auto st = yaml_util::CheckKeys(node, path + ".", keys.Names()); !st.ok()) return st;
  if (node["type"] && !yaml_util::IsNullish(node["type"])) {
    if (auto st = keys.Find("type")->read(node["type"], path + ".type", &s); !st.ok()) return st;
  }
  if (s.type == Type::kPower) s.exponent = 3.0;
  const std::vector<std::string> relevant = RelevantKeys(s.type);
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (name == "type" || yaml_util::IsNullish(kv.second)) continue;
    const std::string key = path + "." + name;
    if (std::find(relevant.begin(), relevant.end(), name) == relevant.end()) {
      if (IsZero(kv.second)) continue;  // The wire form writes every number, 0 for unused ones.
      return Error(kv.first, key,
                   "does not apply to type " + ToString(s.type) +
                       " (its keys: " + absl::StrJoin(relevant, ", ") + ")");
    }
    if (auto st = keys.Find(name)->read(kv.second, key, &s); !st.ok()) return st;
  }
  if (auto st = CheckSchedule(s, node, path); !st.ok()) return st;
  return s;
}

YAML::Node StepScheduleToYaml(const StepSchedule& s) {
  NodeWriter out;
  StepScheduleKeys().Write(s, &out);
  YAML::Node schedule = out.root();
  schedule.SetStyle(YAML::EmitterStyle::Flow);
  return schedule;
}

std::string DescribeSchedule(const StepSchedule& s) {
  const std::string window = absl::StrCat(" over steps [", s.start_step, ", ", s.end_step, ")");
  switch (s.type) {
    case Type::kConstant:
      return Fmt(s.value);
    case Type::kLinear:
    case Type::kCosine:
      return absl::StrCat(ToString(s.type), " ", Fmt(s.start_value), "->", Fmt(s.end_value), window);
    case Type::kPower:
      return absl::StrCat("POWER^", Fmt(s.exponent), " ", Fmt(s.start_value), "->", Fmt(s.end_value), window);
    case Type::kExp:
      return absl::StrCat("EXP ", Fmt(s.start_value), "*", Fmt(s.decay), "^(step-", s.start_step, ")");
    case Type::kCycle: {
      std::vector<std::string> parts;
      for (const StepSchedule& c : s.cycle) parts.push_back(DescribeSchedule(c));
      return absl::StrCat("CYCLE from step ", s.start_step, " [", absl::StrJoin(parts, "; "), "]");
    }
  }
  return "?";
}

std::string ToString(StepSchedule::Type type) { return StepScheduleTypes().Name(type); }

}  // namespace nmsparse
