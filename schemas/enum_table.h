// The names of an enum, declared once: EnumTable<T> reads a value case-insensitively (the error lists the
// names) and prints its canonical spelling, so parsing, the canonical YAML, the wire form (proto enum values
// are the upper-cased names), the JSON Schema and messages all use the same list.
#ifndef NMSPARSE_SCHEMAS_ENUM_TABLE_H_
#define NMSPARSE_SCHEMAS_ENUM_TABLE_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

template <typename T>
class EnumTable {
 public:
  EnumTable(std::initializer_list<std::pair<const char*, T>> entries) {
    for (const auto& [name, value] : entries) entries_.emplace_back(name, value);
  }

  // The canonical spelling of `value` ("?" for a value outside the table).
  const std::string& Name(T value) const {
    static const std::string kUnknown = "?";
    for (const auto& [name, v] : entries_) {
      if (v == value) return name;
    }
    return kUnknown;
  }

  // The value named `text`, in any case.
  absl::StatusOr<T> Parse(const std::string& text) const {
    for (const auto& [name, value] : entries_) {
      if (absl::EqualsIgnoreCase(name, text)) return value;
    }
    return absl::InvalidArgumentError("value '" + text + "' is not one of " + absl::StrJoin(Names(), ", "));
  }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, value] : entries_) names.push_back(name);
    return names;
  }

  const std::vector<std::pair<std::string, T>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, T>> entries_;
};

// The one T, built on first use and never destroyed (tables of names may be read while others are destroyed).
template <typename T>
const T& Instance() {
  static const T* instance = new T;
  return *instance;
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_ENUM_TABLE_H_
