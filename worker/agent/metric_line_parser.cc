#include "worker/agent/metric_line_parser.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "contract/metric_line.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace nmsparse::agent {
namespace {

// A JSON number that is a non-negative integer (epoch and step counters).
std::optional<uint64_t> AsCounter(const google::protobuf::Value& value) {
  if (value.kind_case() != google::protobuf::Value::kNumberValue) return std::nullopt;
  const double v = value.number_value();
  if (!(v >= 0) || v != std::floor(v) || v > 9.0e15) return std::nullopt;
  return static_cast<uint64_t>(v);
}

}  // namespace

std::optional<ParsedMetricLine> ParseMetricLine(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return std::nullopt;
  google::protobuf::Struct object;
  if (!google::protobuf::util::JsonStringToMessage(std::string(line), &object).ok()) return std::nullopt;

  const auto& fields = object.fields();
  const auto kind = fields.find(contract::kKindKey);
  if (kind == fields.end() || kind->second.kind_case() != google::protobuf::Value::kStringValue) {
    return std::nullopt;
  }
  const std::string& kind_name = kind->second.string_value();
  if (kind_name != contract::kKindEpoch && kind_name != contract::kKindStep &&
      kind_name != contract::kKindFinal && kind_name != contract::kKindProgress)
    return std::nullopt;

  ParsedMetricLine out;
  out.is_final = kind_name == contract::kKindFinal;
  out.point.set_kind(kind_name);
  for (const auto& [name, value] : fields) {
    if (name == contract::kKindKey) continue;
    if (name == contract::kEpochKey || name == contract::kStepKey) {
      const std::optional<uint64_t> counter = AsCounter(value);
      if (!counter) return std::nullopt;
      if (name == contract::kEpochKey) {
        out.point.set_epoch(static_cast<uint32_t>(*counter));
      } else {
        out.point.set_step(*counter);
      }
      continue;
    }
    switch (value.kind_case()) {
      case google::protobuf::Value::kNumberValue:
        (*out.point.mutable_values())[name] = value.number_value();
        break;
      case google::protobuf::Value::kStringValue:
        (*out.point.mutable_labels())[name] = value.string_value();
        break;
      case google::protobuf::Value::kBoolValue:
        (*out.point.mutable_values())[name] = value.bool_value() ? 1.0 : 0.0;
        break;
      default:  // null, nested objects and lists carry no scalar: not part of the flat protocol.
        break;
    }
  }
  return out;
}

}  // namespace nmsparse::agent
