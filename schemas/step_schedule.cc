#include "schemas/step_schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using Type = StepSchedule::Type;
using yaml_util::Error;

const std::vector<std::pair<std::string, Type>> kTypes = {
    {"CONSTANT", Type::kConstant}, {"LINEAR", Type::kLinear}, {"EXP", Type::kExp},
    {"COSINE", Type::kCosine},     {"POWER", Type::kPower},   {"CYCLE", Type::kCycle}};

const std::vector<std::string> kKeys = {"type",     "value",    "start_value", "end_value", "start_step",
                                        "end_step", "exponent", "decay",       "cycle"};

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

absl::Status ReadField(const std::string& name, const YAML::Node& value, const std::string& key,
                       StepSchedule* out) {
  auto fraction = [&](double* field) -> absl::Status {
    auto v = yaml_util::ReadDouble(value, key, 0.0, 1.0);
    if (!v.ok()) return v.status();
    *field = *v;
    return absl::OkStatus();
  };
  auto step = [&](int64_t* field) -> absl::Status {
    auto v = yaml_util::ReadInt(value, key, 0);
    if (!v.ok()) return v.status();
    *field = *v;
    return absl::OkStatus();
  };
  if (name == "value") return fraction(&out->value);
  if (name == "start_value") return fraction(&out->start_value);
  if (name == "end_value") return fraction(&out->end_value);
  if (name == "start_step") return step(&out->start_step);
  if (name == "end_step") return step(&out->end_step);
  if (name == "exponent" || name == "decay") {
    auto v = yaml_util::ReadDouble(value, key, 0.0);
    if (!v.ok()) return v.status();
    (name == "exponent" ? out->exponent : out->decay) = *v;
    return absl::OkStatus();
  }
  if (name == "cycle") {
    if (!value.IsSequence()) {
      return Error(value, key, "value " + yaml_util::Describe(value) + " is not a list of schedules");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      auto child = ParseStepSchedule(value[i], absl::StrCat(key, "[", i, "]"));
      if (!child.ok()) return child.status();
      out->cycle.push_back(*child);
    }
    return absl::OkStatus();
  }
  return Error(value, key, "unknown key");
}

bool IsZero(const YAML::Node& value) {
  if (yaml_util::IsNullish(value)) return true;
  if (value.IsSequence()) return value.size() == 0;
  if (!value.IsScalar()) return false;
  double v = 1.0;
  return YAML::convert<double>::decode(value, v) && v == 0.0;
}

}  // namespace

bool operator==(const StepSchedule& a, const StepSchedule& b) {
  return a.type == b.type && a.value == b.value && a.start_value == b.start_value &&
         a.end_value == b.end_value && a.start_step == b.start_step && a.end_step == b.end_step &&
         a.exponent == b.exponent && a.decay == b.decay && a.cycle == b.cycle;
}

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
  if (auto st = yaml_util::CheckKeys(node, path + ".", kKeys); !st.ok()) return st;
  if (node["type"] && !yaml_util::IsNullish(node["type"])) {
    auto type = yaml_util::ReadEnum(node["type"], path + ".type", kTypes);
    if (!type.ok()) return type.status();
    s.type = *type;
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
    if (auto st = ReadField(name, kv.second, key, &s); !st.ok()) return st;
  }
  if (auto st = CheckSchedule(s, node, path); !st.ok()) return st;
  return s;
}

YAML::Node StepScheduleToYaml(const StepSchedule& s) {
  YAML::Node out(YAML::NodeType::Map);
  out["type"] = ToString(s.type);
  out["value"] = Fmt(s.value);
  out["start_value"] = Fmt(s.start_value);
  out["end_value"] = Fmt(s.end_value);
  out["start_step"] = s.start_step;
  out["end_step"] = s.end_step;
  out["exponent"] = Fmt(s.exponent);
  out["decay"] = Fmt(s.decay);
  if (s.type == Type::kCycle) {
    YAML::Node cycle(YAML::NodeType::Sequence);
    for (const StepSchedule& c : s.cycle) cycle.push_back(StepScheduleToYaml(c));
    out["cycle"] = cycle;
  }
  out.SetStyle(YAML::EmitterStyle::Flow);
  return out;
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

std::string ToString(StepSchedule::Type type) {
  for (const auto& [name, value] : kTypes) {
    if (value == type) return name;
  }
  return "?";
}

}  // namespace nmsparse
