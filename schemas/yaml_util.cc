#include "schemas/yaml_util.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/did_you_mean.h"
#include "yaml-cpp/depthguard.h"

namespace nmsparse {
namespace yaml_util {

int Line(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

absl::Status Error(const YAML::Node& node, const std::string& path, const std::string& reason) {
  const int line = Line(node);
  if (line <= 0) return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", path, ": ", reason));
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined()) return "<absent>";
  if (node.IsScalar()) return node.Scalar();
  if (node.IsNull()) return "null";
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

bool IsNullish(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return true;
  // A plain `null`/`~` scalar is already Null in yaml-cpp; a quoted "null" stays a string on purpose.
  return false;
}

std::string Upper(std::string s) { return absl::AsciiStrToUpper(s); }

std::string JoinNames(const std::vector<std::string>& names) { return absl::StrJoin(names, ", "); }

absl::StatusOr<std::string> ReadString(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    return Error(node, path, absl::StrCat("value ", Describe(node), " is not a scalar: expected a string"));
  }
  return node.Scalar();
}

namespace {

// The allowed range as an out-of-range message says it. A bound at or beyond int32's only guards the
// conversion to the key's type: below `min` it is left out (">= 1"), but a value above it is told the range
// ("in [1, 2147483647]"), never a bound it meets.
std::string IntRange(bool above, int64_t min, int64_t max) {
  if (min == std::numeric_limits<int64_t>::min()) return absl::StrCat("<= ", max);
  if (!above && max >= std::numeric_limits<int32_t>::max()) return absl::StrCat(">= ", min);
  return absl::StrCat("in [", min, ", ", max, "]");
}

absl::Status OutOfRange(const YAML::Node& node, const std::string& path, bool above, int64_t min,
                        int64_t max) {
  return Error(
      node, path,
      absl::StrCat("value ", node.Scalar(), " is out of range: must be ", IntRange(above, min, max)));
}

}  // namespace

absl::StatusOr<int64_t> ReadInt(const YAML::Node& node, const std::string& path, int64_t min, int64_t max) {
  if (!node.IsScalar()) {
    return Error(node, path, absl::StrCat("value ", Describe(node), " is not an integer"));
  }
  const std::string& text = node.Scalar();
  errno = 0;
  char* end = nullptr;
  int64_t value = std::strtoll(text.c_str(), &end, 10);
  const bool digits = !text.empty() && *end == '\0';
  // Digits past int64: strtoll saturates, and the sign says on which side.
  if (digits && errno == ERANGE) return OutOfRange(node, path, value > 0, min, max);
  if (!digits) {
    // Accept integral floats such as "8.0" (PyYAML dumps of ints that went through a float), and tell one
    // past the range ("4e9" for an int) that it is out of range, not that it is no integer.
    char* fend = nullptr;
    const double d = std::strtod(text.c_str(), &fend);
    if (text.empty() || *fend != '\0' || !std::isfinite(d) || d != std::floor(d)) {
      return Error(node, path, absl::StrCat("value '", text, "' is not an integer"));
    }
    if (d < static_cast<double>(min) || d < -0x1p63) return OutOfRange(node, path, false, min, max);
    if (d > static_cast<double>(max) || d >= 0x1p63) return OutOfRange(node, path, true, min, max);
    if (std::fabs(d) > 9e15) {  // Within range but past the doubles that hold every integer exactly.
      return Error(node, path, absl::StrCat("value '", text, "' is not an exact integer: write its digits"));
    }
    value = static_cast<int64_t>(d);
  }
  if (value < min || value > max) return OutOfRange(node, path, value > max, min, max);
  return value;
}

absl::StatusOr<double> ReadDouble(const YAML::Node& node, const std::string& path, double min, double max,
                                  bool max_open) {
  if (!node.IsScalar()) {
    return Error(node, path, absl::StrCat("value ", Describe(node), " is not a number"));
  }
  const std::string& text = node.Scalar();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value)) {
    return Error(node, path, absl::StrCat("value '", text, "' is not a finite number"));
  }
  const bool below = value < min;
  const bool above = max_open ? value >= max : value > max;
  if (below || above) {
    std::string range;
    if (std::isinf(max)) {
      range = absl::StrCat(">= ", FormatDouble(min));
    } else if (std::isinf(min)) {
      range = absl::StrCat(max_open ? "< " : "<= ", FormatDouble(max));
    } else {
      range = absl::StrCat("in [", FormatDouble(min), ", ", FormatDouble(max), max_open ? ")" : "]");
    }
    return Error(node, path, absl::StrCat("value ", text, " is out of range: must be ", range));
  }
  return value;
}

absl::StatusOr<bool> ReadBool(const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) {
    const std::string lower = absl::AsciiStrToLower(node.Scalar());
    if (lower == "true" || lower == "yes" || lower == "on") return true;
    if (lower == "false" || lower == "no" || lower == "off") return false;
  }
  return Error(node, path,
               absl::StrCat("value '", Describe(node), "' is not a boolean: must be true or false"));
}

std::string FormatDouble(double value) {
  if (value == 0) value = 0.0;  // -0.0 too: one text per value, since canonical YAML is what run hashes hash.
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

absl::Status CheckKeys(const YAML::Node& map, const std::string& prefix,
                       const std::vector<std::string>& known) {
  for (const auto& kv : map) {
    // A flow map such as {set:, {k: v}} has a map as a key: refuse it instead of failing the conversion.
    if (!kv.first.IsScalar())
      return Error(kv.first, prefix, "a key must be a plain word, not a map or a list");
    const std::string key = kv.first.as<std::string>();
    bool found = false;
    for (const auto& k : known) found = found || k == key;
    if (!found) {
      return Error(
          kv.first, prefix + key,
          absl::StrCat("unknown key", DidYouMean(key, known), "; known keys: ", absl::StrJoin(known, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::Status WithFile(const absl::Status& status, const std::string& file_name) {
  if (status.ok() || file_name.empty()) return status;
  std::string message(status.message());
  constexpr char kLine[] = "line ";
  if (message.rfind(kLine, 0) == 0) {
    message = absl::StrCat(file_name, ":", message.substr(sizeof(kLine) - 1));
  } else {
    message = absl::StrCat(file_name, ": ", message);
  }
  return absl::Status(status.code(), message);
}

absl::StatusOr<YAML::Node> LoadYaml(const std::string& text, const std::string& file_name) {
  const std::string where = file_name.empty() ? "line " : file_name + ":";
  try {
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at its own fixed depth and calls the file "bad file"; its mark is no help either.
    return absl::InvalidArgumentError(
        absl::StrCat(file_name.empty() ? "YAML" : file_name, ": nested too deeply: maps and lists inside ",
                     "each other go past the YAML parser's limit of ", e.depth(), " levels"));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(where, e.mark.line + 1, ": YAML syntax error: ", e.msg));
  }
}

}  // namespace yaml_util
}  // namespace nmsparse
