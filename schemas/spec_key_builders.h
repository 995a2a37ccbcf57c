// Builders of the common kinds of keys of a key table (schemas/spec_keys.h): scalars with their ranges or
// enum tables, members read and written whole, sections of another table, and keys left out of the canonical
// form at their default. `ref` is a capture-less function S* -> T* or a member pointer.
#ifndef NMSPARSE_SCHEMAS_SPEC_KEY_BUILDERS_H_
#define NMSPARSE_SCHEMAS_SPEC_KEY_BUILDERS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schemas/enum_table.h"
#include "schemas/spec_keys.h"
#include "schemas/yaml_util.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

namespace spec_keys_internal {

template <typename S, typename T>
struct Ref {
  T* (*fn)(S*) = nullptr;
  T S::*member = nullptr;
  T* operator()(S* s) const { return member != nullptr ? &(s->*member) : fn(s); }
  const T& operator()(const S& s) const { return *(*this)(const_cast<S*>(&s)); }
};

// A key whose value is a T at `ref`, reset to the default S's.
template <typename S, typename T>
SpecKey<S> RefKey(const std::string& name, KeyKind kind, Ref<S, T> ref) {
  SpecKey<S> key;
  key.info.name = name;
  key.info.kind = kind;
  key.reset = [ref](S* s) {
    static const S defaults{};
    *ref(s) = ref(defaults);
  };
  return key;
}

template <typename T>
struct NonDeduced {
  using type = T;
};

// The same for a T with operator==.
template <typename S, typename T>
SpecKey<S> ValueKey(const std::string& name, KeyKind kind, Ref<S, T> ref) {
  SpecKey<S> key = RefKey<S, T>(name, kind, ref);
  key.equal = [ref](const S& a, const S& b) { return ref(a) == ref(b); };
  return key;
}

}  // namespace spec_keys_internal

template <typename S, typename T>
spec_keys_internal::Ref<S, T> MakeRef(T S::*member) {
  return {nullptr, member};
}
template <typename S, typename T>
spec_keys_internal::Ref<S, T> MakeRef(T* (*fn)(S*)) {
  return {fn, nullptr};
}

namespace spec_keys_internal {

// The canonical scalar of a stored value: integers as int64_t, strings viewed.
inline SpecScalar ScalarOf(bool value) { return value; }
inline SpecScalar ScalarOf(double value) { return value; }
inline SpecScalar ScalarOf(const std::string& value) { return absl::string_view(value); }
template <typename T>
SpecScalar ScalarOf(T value) {
  return static_cast<int64_t>(value);
}

// A key whose value is a scalar T at `ref`, read by `read` (node, path) -> StatusOr<value convertible to T>.
template <typename S, typename T, typename Read>
SpecKey<S> ScalarKey(const std::string& name, KeyKind kind, Ref<S, T> ref, Read read) {
  SpecKey<S> key = ValueKey<S, T>(name, kind, ref);
  key.read = [ref, read](const YAML::Node& v, const std::string& path, S* s) -> absl::Status {
    auto r = read(v, path);
    if (!r.ok()) return r.status();
    *ref(s) = static_cast<T>(*r);
    return absl::OkStatus();
  };
  key.write = [ref](const S& s, const KeyInfo& self, SpecWriter* out) {
    out->Scalar(self, ScalarOf(ref(s)));
  };
  return key;
}

}  // namespace spec_keys_internal

// An integer in [min, max], stored as T (int, int64_t, uint64_t).
template <typename S, typename T>
SpecKey<S> IntKey(const std::string& name, spec_keys_internal::Ref<S, T> ref, int64_t min,
                  int64_t max = std::numeric_limits<int32_t>::max()) {
  SpecKey<S> key = spec_keys_internal::ScalarKey<S, T>(
      name, KeyKind::kInteger, ref, [min, max](const YAML::Node& v, const std::string& path) {
        return yaml_util::ReadInt(v, path, min, max);
      });
  key.info.min = static_cast<double>(min);
  key.info.max = static_cast<double>(max);
  return key;
}
template <typename S, typename T>
SpecKey<S> IntKey(const std::string& name, T S::*member, int64_t min,
                  int64_t max = std::numeric_limits<int32_t>::max()) {
  return IntKey<S, T>(name, MakeRef(member), min, max);
}

// A finite number in [min, max] (open bounds exclude their value).
template <typename S>
SpecKey<S> NumberKey(const std::string& name, double S::*member, double min,
                     double max = std::numeric_limits<double>::infinity(), bool max_open = false,
                     bool min_open = false) {
  SpecKey<S> key = spec_keys_internal::ScalarKey<S, double>(name, KeyKind::kNumber, MakeRef(member),
                                                            NumberReader(min, max, min_open, max_open));
  SetRange(&key.info, min, max, min_open, max_open);
  return key;
}

template <typename S>
SpecKey<S> BoolKey(const std::string& name, bool S::*member) {
  return spec_keys_internal::ScalarKey<S, bool>(name, KeyKind::kBoolean, MakeRef(member),
                                                yaml_util::ReadBool);
}

template <typename S>
SpecKey<S> StringKey(const std::string& name, std::string S::*member) {
  return spec_keys_internal::ScalarKey<S, std::string>(name, KeyKind::kString, MakeRef(member),
                                                       ReadSpecString);
}

// A value of an enum, read case-insensitively and written in the table's spelling.
template <typename S, typename E>
SpecKey<S> EnumKey(const std::string& name, E S::*member, const EnumTable<E>& table) {
  const auto ref = MakeRef(member);
  SpecKey<S> key = spec_keys_internal::ScalarKey<S, E>(
      name, KeyKind::kEnum, ref, [&table](const YAML::Node& v, const std::string& path) {
        return yaml_util::ReadEnum(v, path, table.entries());
      });
  key.info.names = table.Names();
  key.write = [ref, &table](const S& s, const KeyInfo& self, SpecWriter* out) {
    out->Scalar(self, table.Name(ref(s)));
  };
  return key;
}

// A string from a fixed set of words, read case-insensitively and stored in the set's spelling.
template <typename S>
SpecKey<S> WordKey(const std::string& name, std::string S::*member, const std::vector<std::string>& words) {
  SpecKey<S> key =
      spec_keys_internal::ScalarKey<S, std::string>(name, KeyKind::kEnum, MakeRef(member), WordReader(words));
  key.info.names = words;
  return key;
}

// A key whose value is member T of S, read and written whole by the given functions: a list, a nested map, or
// a value no scalar key holds. T's == compares it; reset restores the default S's value.
template <typename S, typename T>
SpecKey<S> MemberKey(
    const std::string& name, KeyKind kind, T S::*member,
    typename spec_keys_internal::NonDeduced<absl::StatusOr<T> (*)(const YAML::Node&,
                                                                  const std::string&)>::type read,
    typename spec_keys_internal::NonDeduced<void (*)(const T&, const KeyInfo&, SpecWriter*)>::type write) {
  SpecKey<S> key = spec_keys_internal::ValueKey<S, T>(name, kind, MakeRef(member));
  key.read = [member, read](const YAML::Node& v, const std::string& path, S* s) -> absl::Status {
    absl::StatusOr<T> value = read(v, path);
    if (!value.ok()) return value.status();
    s->*member = *std::move(value);
    return absl::OkStatus();
  };
  key.write = [member, write](const S& s, const KeyInfo& self, SpecWriter* out) {
    write(s.*member, self, out);
  };
  return key;
}

// Writes `value` as the section `self` of the keys of `table`.
template <typename T>
void WriteSection(const KeyTable<T>& table, const T& value, const KeyInfo& self, SpecWriter* out) {
  out->BeginSection(self);
  table.Write(value, out);
  out->EndSection();
}

// A map of the keys of `table`, read into a default T (so the section replaces what *s had).
template <typename S, typename T>
SpecKey<S> SectionKey(const std::string& name, T S::*member, const KeyTable<T>& table, bool flow = false) {
  const auto ref = MakeRef(member);
  SpecKey<S> key = spec_keys_internal::RefKey<S, T>(name, KeyKind::kSection, ref);
  key.info.keys = table.Infos();
  key.info.flow = flow;
  key.read = [ref, &table](const YAML::Node& v, const std::string& path, S* s) -> absl::Status {
    T section = table.defaults();
    if (absl::Status st = table.Read(v, path, &section); !st.ok()) return st;
    *ref(s) = std::move(section);
    return absl::OkStatus();
  };
  key.equal = [ref, &table](const S& a, const S& b) { return table.Equal(ref(a), ref(b)); };
  key.write = [ref, &table](const S& s, const KeyInfo& self, SpecWriter* out) {
    WriteSection(table, ref(s), self, out);
  };
  return key;
}

// A list of integers, each >= min, written as a flow list.
template <typename S>
SpecKey<S> IntListKey(const std::string& name, std::vector<int> S::*member, int64_t min) {
  const auto ref = MakeRef(member);
  SpecKey<S> key = spec_keys_internal::ValueKey<S, std::vector<int>>(name, KeyKind::kIntegerList, ref);
  key.read = [ref, min](const YAML::Node& v, const std::string& path, S* s) -> absl::Status {
    if (!v.IsSequence())
      return yaml_util::Error(v, path, "value " + yaml_util::Describe(v) + " is not a list");
    std::vector<int> items;
    for (size_t i = 0; i < v.size(); ++i) {
      auto item = yaml_util::ReadInt(v[i], path + "[" + std::to_string(i) + "]", min);
      if (!item.ok()) return item.status();
      items.push_back(static_cast<int>(*item));
    }
    *ref(s) = std::move(items);
    return absl::OkStatus();
  };
  key.write = [ref](const S& s, const KeyInfo& self, SpecWriter* out) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (int item : ref(s)) list.push_back(item);
    list.SetStyle(YAML::EmitterStyle::Flow);
    out->Collection(self, list);
  };
  key.info.min = static_cast<double>(min);
  return key;
}

// A list of numbers in [min, max] (open bounds exclude their value) whose length is one of `lengths` (empty:
// any), written as a flow list.
template <typename S>
SpecKey<S> NumberListKey(const std::string& name, std::vector<double> S::*member, double min, double max,
                         bool min_open, std::vector<int> lengths) {
  const auto ref = MakeRef(member);
  SpecKey<S> key = spec_keys_internal::ValueKey<S, std::vector<double>>(name, KeyKind::kNumberList, ref);
  key.read = [ref, min, max, min_open, lengths](const YAML::Node& v, const std::string& path,
                                                S* s) -> absl::Status {
    auto items = ReadList<double>(v, path, "numbers", [](const YAML::Node& item, const std::string& p) {
      return ReadNumberIn(item, p, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                          false, false);
    });
    if (!items.ok()) return items.status();
    if (!lengths.empty() &&
        std::find(lengths.begin(), lengths.end(), static_cast<int>(items->size())) == lengths.end()) {
      std::string allowed;
      for (int n : lengths) allowed += (allowed.empty() ? "" : " or ") + std::to_string(n);
      return yaml_util::Error(
          v, path, "value " + yaml_util::Describe(v) + " is not a list of " + allowed + " numbers");
    }
    for (size_t i = 0; i < items->size(); ++i) {
      auto checked = ReadNumberIn(v[i], path + "[" + std::to_string(i) + "]", min, max, min_open, false);
      if (!checked.ok()) return checked.status();
    }
    *ref(s) = *std::move(items);
    return absl::OkStatus();
  };
  key.write = [ref](const S& s, const KeyInfo& self, SpecWriter* out) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (double item : ref(s)) list.push_back(yaml_util::FormatDouble(item));
    list.SetStyle(YAML::EmitterStyle::Flow);
    out->Collection(self, list);
  };
  for (int n : lengths) key.info.names.push_back(std::to_string(n));
  SetRange(&key.info, min, max, min_open, false);
  return key;
}

// Left out of the canonical form while its value is the default (keys added after run hashes were first
// stored, so that older runs keep their canonical text and content hash).
template <typename S>
SpecKey<S> OmittedAtDefault(SpecKey<S> key) {
  key.info.omitted_at_default = true;
  auto write = key.write;
  auto equal = key.equal;
  key.info.default_text = DefaultText(key.info.name, [&](SpecWriter* out) { write(S{}, key.info, out); });
  key.write = [write, equal](const S& s, const KeyInfo& self, SpecWriter* out) {
    static const S defaults{};
    if (!equal(s, defaults)) write(s, self, out);
  };
  return key;
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPEC_KEY_BUILDERS_H_
