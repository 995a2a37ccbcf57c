// Scalar readers shared by the spec parsers: each reads one YAML value and, on bad input, returns an
// InvalidArgument error "line L: key.path: value V is ...: must be ..." naming the key path, the value, what
// is allowed and the line. Internal to //schemas.
#ifndef NMSPARSE_SCHEMAS_YAML_UTIL_H_
#define NMSPARSE_SCHEMAS_YAML_UTIL_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {
namespace yaml_util {

// 1-based line of `node`, or 0 for a node that was built in memory (no source position).
int Line(const YAML::Node& node);

// InvalidArgument "line L: path: reason" ("path: reason" without a source line).
absl::Status Error(const YAML::Node& node, const std::string& path, const std::string& reason);

// The scalar text of a node, for messages (a short flow form for maps and lists).
std::string Describe(const YAML::Node& node);

// True when the node is absent or YAML null (`~`, `null`, empty): the key takes its default.
bool IsNullish(const YAML::Node& node);

absl::StatusOr<int64_t> ReadInt(const YAML::Node& node, const std::string& path,
                                int64_t min = std::numeric_limits<int64_t>::min(),
                                int64_t max = std::numeric_limits<int64_t>::max());
// A finite number in [min, max] (or [min, max) when max_open).
absl::StatusOr<double> ReadDouble(const YAML::Node& node, const std::string& path,
                                  double min = -std::numeric_limits<double>::infinity(),
                                  double max = std::numeric_limits<double>::infinity(),
                                  bool max_open = false);
// true/false/yes/no/on/off in any case, as YAML 1.1 (and Python's PyYAML) read them.
absl::StatusOr<bool> ReadBool(const YAML::Node& node, const std::string& path);
absl::StatusOr<std::string> ReadString(const YAML::Node& node, const std::string& path);

// A case-insensitive enumeration value; the error lists the allowed names.
template <typename T>
absl::StatusOr<T> ReadEnum(const YAML::Node& node, const std::string& path,
                           const std::vector<std::pair<std::string, T>>& names);

// Shortest decimal text that parses back to exactly `value` (canonical output and hashing); -0 is written 0,
// so that one value has one text.
std::string FormatDouble(double value);

// A map node's keys must be among `known`; the first other key is an error listing the known keys.
absl::Status CheckKeys(const YAML::Node& map, const std::string& prefix,
                       const std::vector<std::string>& known);

// Rewrites a "line L: ..." message into "FILE:L: ..." (and prefixes "FILE: " to messages without a line),
// keeping the status code. An empty file name leaves the status as it is.
absl::Status WithFile(const absl::Status& status, const std::string& file_name);

// Parses YAML text; a syntax error becomes InvalidArgument "FILE:LINE: YAML syntax error: ...".
absl::StatusOr<YAML::Node> LoadYaml(const std::string& text, const std::string& file_name);

// Upper-cased copy (ASCII).
std::string Upper(std::string s);

// --- implementation of the template ---
std::string JoinNames(const std::vector<std::string>& names);

template <typename T>
absl::StatusOr<T> ReadEnum(const YAML::Node& node, const std::string& path,
                           const std::vector<std::pair<std::string, T>>& names) {
  auto text = ReadString(node, path);
  if (!text.ok()) return text.status();
  const std::string upper = Upper(*text);
  std::vector<std::string> allowed;
  for (const auto& [name, value] : names) {
    if (Upper(name) == upper) return value;
    allowed.push_back(name);
  }
  return Error(node, path, "value '" + *text + "' is not one of " + JoinNames(allowed));
}

}  // namespace yaml_util
}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_YAML_UTIL_H_
