// The key table of a spec section: every key declared once, with how it is read (its range or enum table),
// compared, written in canonical form (and whether it is left out at its default), and documented (its doc
// string, its flat reference-config alias, whether validation checks it against other keys or the model).
// The readers, operator==, the canonical YAML, the wire form (the YAML keys are the proto field names), the
// JSON Schemas (tools: //schemas:spec_schema_writer) and the docs' key tables are loops over these tables.
//
//   const KeyTable<DataConfig> kData({
//       IntKey<DataConfig>("batch_size", &DataConfig::batch_size, 1).Doc("Global batch size ...").Alias(
//           "batch_size"),
//       ...});
//   kData.Read(node, "data", &config.data);      // "line L: data.batch_size: value 0 is out of range: ..."
//   kData.Write(config.data, &writer);            // canonical YAML, YAML nodes or a proto message
#ifndef NMSPARSE_SCHEMAS_SPEC_KEYS_H_
#define NMSPARSE_SCHEMAS_SPEC_KEYS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "schemas/enum_table.h"
#include "schemas/yaml_util.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse {

// What a key's value looks like, for the JSON Schema and the docs.
enum class KeyKind {
  kInteger,
  kNumber,
  kBoolean,
  kString,
  kEnum,          // One of `names`, case-insensitive.
  kSection,       // A map of `keys`.
  kSectionList,   // A list of maps of `keys`.
  kGlobs,         // A glob or a list of globs.
  kSchedule,      // A number (constant) or a map of `keys` (schemas/step_schedule.h).
  kScheduleList,  // A list of schedules (a cycle's).
  kLocations,     // sparsity_loc: letters/words over FF, Q, K, V, O, C, or a list of them.
  kPhases,        // A list of {dense|sparse|fine_tune: fraction} or {kind, fraction}.
};

// The type-erased description of a key: everything but its functions.
struct KeyInfo {
  std::string name;
  KeyKind kind = KeyKind::kString;
  // kInteger and kNumber: the allowed range; an open bound excludes its value.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
  bool max_open = false;
  std::vector<std::string> names;   // kEnum: the values, in canonical spelling.
  std::string default_text;         // The default's canonical text; empty when there is none to show.
  bool required = false;            // No default: the key must be given.
  bool no_default = false;          // Its default is no value to document (e.g. one of two keys is given).
  bool input_only = false;          // Read, never written (e.g. sparsity.recipe, expanded into other keys).
  bool omitted_at_default = false;  // Left out of the canonical form at its default (added after run hashes).
  bool flow = false;                // kSection: written as a flow map.
  bool validated = false;           // Checked against other keys or the model by ValidateExperiment.
  std::string doc;
  std::string alias;          // The flat reference-config (timm train.py) key it maps from, if any.
  std::vector<KeyInfo> keys;  // kSection, kSectionList, kSchedule: the keys of the map.
  // The proto writer's memo of the field this key sets (schemas/proto_bridge.cc); copies start empty.
  struct FieldMemo {
    FieldMemo() = default;
    FieldMemo(const FieldMemo&) {}
    FieldMemo& operator=(const FieldMemo&) { return *this; }
    mutable std::atomic<const void*> field{nullptr};
  } wire;
};

// A canonical scalar: integers, numbers (written in their shortest exact form), booleans, strings and enum
// names (viewed: a writer copies what it keeps before it returns).
using SpecScalar = std::variant<int64_t, double, bool, absl::string_view>;

// The canonical text of a scalar.
std::string ScalarText(const SpecScalar& value);

// Where a section is written: the canonical YAML text, YAML nodes, or a proto message (the keys are its
// field names). Keys come in table order.
class SpecWriter {
 public:
  virtual ~SpecWriter() = default;
  virtual void Scalar(const KeyInfo& key, const SpecScalar& value) = 0;
  // Lists and nested flow maps, as YAML nodes (their style set).
  virtual void Collection(const KeyInfo& key, const YAML::Node& value) = 0;
  // An empty list, the usual value of a list key, without building a node.
  virtual void EmptyList(const KeyInfo& key) = 0;
  // A map of keys (key.flow: in flow style), up to EndSection.
  virtual void BeginSection(const KeyInfo& key) = 0;
  virtual void EndSection() = 0;
};

// Writes YAML nodes: the canonical form of a section as a YAML map.
class NodeWriter : public SpecWriter {
 public:
  NodeWriter() : stack_{YAML::Node(YAML::NodeType::Map)} {}
  void Scalar(const KeyInfo& key, const SpecScalar& value) override;
  void Collection(const KeyInfo& key, const YAML::Node& value) override;
  void EmptyList(const KeyInfo& key) override;
  void BeginSection(const KeyInfo& key) override;
  void EndSection() override;
  YAML::Node root() const { return stack_.front(); }

 private:
  std::vector<YAML::Node> stack_;
  std::vector<std::string> keys_;
};

template <typename S>
struct SpecKey {
  KeyInfo info;
  // Reads a value that is not null into *s; errors "line L: path: value V ...".
  std::function<absl::Status(const YAML::Node& value, const std::string& path, S* s)> read;
  std::function<bool(const S& a, const S& b)> equal;
  std::function<void(const S& s, const KeyInfo& self, SpecWriter* out)> write;  // The key and its value.
  std::function<void(S* s)> reset;                                              // Back to the default.

  SpecKey Doc(std::string text) && {
    info.doc = std::move(text);
    return std::move(*this);
  }
  SpecKey Alias(std::string flat_key) && {
    info.alias = std::move(flat_key);
    return std::move(*this);
  }
  SpecKey Validated() && {
    info.validated = true;
    return std::move(*this);
  }
  SpecKey Keys(std::vector<KeyInfo> keys) && {
    info.keys = std::move(keys);
    return std::move(*this);
  }
  SpecKey Names(std::vector<std::string> names) && {
    info.names = std::move(names);
    return std::move(*this);
  }
  SpecKey NoDefault() && {
    info.no_default = true;
    info.default_text.clear();
    return std::move(*this);
  }
  SpecKey Required() && {
    info.required = true;
    info.default_text.clear();
    return std::move(*this);
  }
};

// The keys a KeyTable::Read saw (their names in the table) with their value nodes.
using KeyNodes = absl::InlinedVector<std::pair<absl::string_view, YAML::Node>, 24>;

// The keys of a section, in canonical order, and the loops over them.
template <typename S>
class KeyTable {
 public:
  explicit KeyTable(std::vector<SpecKey<S>> keys, S defaults = S());

  const std::vector<SpecKey<S>>& keys() const { return keys_; }
  const S& defaults() const { return defaults_; }
  const SpecKey<S>* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  std::vector<KeyInfo> Infos() const;

  // Reads the keys of map `node` into *s in their order, a null value keeping the key's value; unknown and
  // duplicate keys are errors listing the known keys. `path` is the section's key path ("" at the top level).
  // Each key read is appended to `read` with its value node, for cross-key checks that name its line.
  absl::Status Read(const YAML::Node& node, const std::string& path, S* s, KeyNodes* read = nullptr) const;
  bool Equal(const S& a, const S& b) const;
  void Write(const S& s, SpecWriter* out) const;

 private:
  std::vector<SpecKey<S>> keys_;
  S defaults_;
};

// "path.key", or "key" at the top level.
inline std::string KeyPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// The canonical text of the scalar that `write` writes for `key`, or "" when it writes none.
std::string DefaultText(const std::string& key, const std::function<void(SpecWriter*)>& write);

// A finite number in [min, max], an open bound excluding its value; errors "value V is out of range: ...".
absl::StatusOr<double> ReadNumberIn(const YAML::Node& value, const std::string& path, double min, double max,
                                    bool min_open, bool max_open);

// A scalar or a list of scalars, as strings (list items named path[i] in errors).
absl::StatusOr<std::vector<std::string>> ReadStringOrList(const YAML::Node& value, const std::string& path);

// A list of items that `read_item` reads (item i named path[i]); a value that is no list is an error saying
// it is not a list of `what`.
template <typename T>
absl::StatusOr<std::vector<T>> ReadList(const YAML::Node& value, const std::string& path,
                                        const std::string& what,
                                        absl::StatusOr<T> (*read_item)(const YAML::Node&,
                                                                       const std::string&)) {
  if (!value.IsSequence()) {
    return yaml_util::Error(value, path, "value " + yaml_util::Describe(value) + " is not a list of " + what);
  }
  std::vector<T> items;
  for (size_t i = 0; i < value.size(); ++i) {
    absl::StatusOr<T> item = read_item(value[i], absl::StrCat(path, "[", i, "]"));
    if (!item.ok()) return item.status();
    items.push_back(*std::move(item));
  }
  return items;
}

// A YAML list of strings, in flow style ("[a, b]") or block style.
YAML::Node StringList(const std::vector<std::string>& items, bool flow);

// Reads one of `words` in any case, giving the word as listed.
std::function<absl::StatusOr<std::string>(const YAML::Node&, const std::string&)> WordReader(
    const std::vector<std::string>& words);

// Reads a number in [min, max] (ReadNumberIn).
std::function<absl::StatusOr<double>(const YAML::Node&, const std::string&)> NumberReader(double min,
                                                                                          double max,
                                                                                          bool min_open,
                                                                                          bool max_open);

// Declares a number key's range, for the docs and the JSON Schema.
void SetRange(KeyInfo* info, double min, double max, bool min_open, bool max_open);

// A list key's value: "key: []" when empty, else the list `build` makes.
void WriteList(size_t size, const std::function<YAML::Node()>& build, const KeyInfo& self, SpecWriter* out);

// The value node of `key` among the keys a Read saw, or an undefined node.
YAML::Node ReadNode(const KeyNodes& read, absl::string_view key);

// --- Builders of the common kinds. `ref` is a capture-less function S* -> T* or a member pointer. ---

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
                                                       yaml_util::ReadString);
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

// --- KeyTable ---

template <typename S>
KeyTable<S>::KeyTable(std::vector<SpecKey<S>> keys, S defaults)
    : keys_(std::move(keys)), defaults_(std::move(defaults)) {
  for (SpecKey<S>& key : keys_) {
    const KeyInfo& info = key.info;
    if (info.required || info.no_default || info.input_only || info.omitted_at_default || !key.write)
      continue;
    key.info.default_text =
        DefaultText(key.info.name, [&](SpecWriter* out) { key.write(defaults_, key.info, out); });
  }
}

template <typename S>
const SpecKey<S>* KeyTable<S>::Find(const std::string& name) const {
  for (const SpecKey<S>& key : keys_) {
    if (key.info.name == name) return &key;
  }
  return nullptr;
}

template <typename S>
std::vector<std::string> KeyTable<S>::Names() const {
  std::vector<std::string> names;
  for (const SpecKey<S>& key : keys_) names.push_back(key.info.name);
  return names;
}

template <typename S>
std::vector<KeyInfo> KeyTable<S>::Infos() const {
  std::vector<KeyInfo> infos;
  for (const SpecKey<S>& key : keys_) infos.push_back(key.info);
  return infos;
}

// Errors of Read that do not depend on S.
absl::Status NotAMapError(const YAML::Node& node, const std::string& path);
absl::Status UnknownKeyError(const YAML::Node& key_node, const std::string& path,
                             const std::vector<std::string>& known);

template <typename S>
absl::Status KeyTable<S>::Read(const YAML::Node& node, const std::string& path, S* s, KeyNodes* read) const {
  if (yaml_util::IsNullish(node)) return absl::OkStatus();
  if (!node.IsMap()) return NotAMapError(node, path);
  absl::InlinedVector<const SpecKey<S>*, 32> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      return yaml_util::Error(kv.first, path, "a key must be a plain word, not a map or a list");
    }
    const std::string& name = kv.first.Scalar();
    const std::string key_path = KeyPath(path, name);
    const SpecKey<S>* key = Find(name);
    if (key == nullptr) return UnknownKeyError(kv.first, key_path, Names());
    for (const SpecKey<S>* k : seen) {
      if (k == key) return yaml_util::Error(kv.first, key_path, "duplicate key");
    }
    seen.push_back(key);
    if (yaml_util::IsNullish(kv.second)) continue;  // null: the default (PyYAML dumps None as null).
    if (absl::Status st = key->read(kv.second, key_path, s); !st.ok()) return st;
    if (read != nullptr) read->emplace_back(key->info.name, kv.second);
  }
  return absl::OkStatus();
}

template <typename S>
bool KeyTable<S>::Equal(const S& a, const S& b) const {
  for (const SpecKey<S>& key : keys_) {
    if (!key.equal(a, b)) return false;
  }
  return true;
}

template <typename S>
void KeyTable<S>::Write(const S& s, SpecWriter* out) const {
  for (const SpecKey<S>& key : keys_) {
    if (key.write) key.write(s, key.info, out);
  }
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_SPEC_KEYS_H_
