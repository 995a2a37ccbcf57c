// The key table of a spec section: every key declared once, with how it is read (its range or enum table),
// compared, written in canonical form (and whether it is left out at its default), and documented (its doc
// string, its flat reference-config alias, whether validation checks it against other keys or the model).
// The readers, operator==, the canonical YAML (which is also the wire and stored form of a run's spec), the
// JSON Schemas and the docs' key tables (schemas/spec_docs.h) are loops over these tables. The builders of
// the common kinds of keys are in schemas/spec_key_builders.h.
//
//   const KeyTable<DataConfig> kData({
//       IntKey<DataConfig>("batch_size", &DataConfig::batch_size, 1).Doc("Global batch size ...").Alias(
//           "batch_size"),
//       ...});
//   kData.Read(node, "data", &config.data);      // "line L: data.batch_size: value 0 is out of range: ..."
//   kData.Write(config.data, &writer);            // canonical YAML, YAML nodes or a proto message
#ifndef NMSPARSE_SCHEMAS_SPEC_KEYS_H_
#define NMSPARSE_SCHEMAS_SPEC_KEYS_H_

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
  kIntegers,      // A positive integer or a list of them.
  kSchedule,      // A number (constant) or a map of `keys` (schemas/step_schedule.h).
  kScheduleList,  // A list of schedules (a cycle's).
  kLocations,     // sparsity_loc: letters/words over FF, Q, K, V, O, C, or a list of them.
  kPhases,        // A list of {dense|sparse|fine_tune: fraction} or {kind, fraction}.
  kIntegerList,   // A list of integers in [min, max].
  kNumberList,    // A list of numbers in [min, max], of one of the lengths in `names` (empty: any).
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

// A string key's value, at most limits::kMaxSpecStringBytes: the spec travels as one YAML text, bounded as a
// whole where it enters nmserver, and this bounds each of its strings (names, paths, globs) the same way on
// nmctl's side and on nmserver's.
absl::StatusOr<std::string> ReadSpecString(const YAML::Node& value, const std::string& path);

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

// The key named `name` among `keys` (a table's Infos, or a key's sub-keys), or nullptr.
const KeyInfo* FindKey(const std::vector<KeyInfo>& keys, const std::string& name);

// The value node of `key` among the keys a Read saw, or an undefined node.
YAML::Node ReadNode(const KeyNodes& read, absl::string_view key);

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
