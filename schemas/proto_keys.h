// Proto messages and the key tables (schemas/spec_keys.h): a key is the field of its name, reached through
// the message's descriptor and reflection. SetScalarField / GetScalarField move a key's canonical scalar in
// and out of a field; the Proto*Key builders declare keys
// of blocks that are read straight into a message (the sweep file's early_stopping and search), with their
// ranges or words.
#ifndef NMSPARSE_SCHEMAS_PROTO_KEYS_H_
#define NMSPARSE_SCHEMAS_PROTO_KEYS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "schemas/spec_key_builders.h"

namespace nmsparse {

// Sets a singular scalar field: an integer (any integer field), number, boolean or string; an enum field
// takes its value's name in any case. False when the value does not fit the field.
bool SetScalarField(google::protobuf::Message* message, const google::protobuf::FieldDescriptor* field,
                    const SpecScalar& value);

// A singular scalar field's value (a string viewed in the message; an enum by its value's name).
SpecScalar GetScalarField(const google::protobuf::Message& message,
                          const google::protobuf::FieldDescriptor* field);

// A message that came over the wire rather than through KeyTable::Read: each word key's value (kEnum) is
// one of its words and each required string key is given. Errors "path.key: value 'v' is not one of a, b".
absl::Status CheckWireWords(const google::protobuf::Message& message, const KeyInfo& key,
                            const std::string& path);
template <typename M>
absl::Status CheckWireWords(const KeyTable<M>& table, const M& message, const std::string& path) {
  for (const SpecKey<M>& key : table.keys()) {
    if (absl::Status st = CheckWireWords(message, key.info, path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// A key of message type M: the field of the same name, read by `read` (node, path) -> StatusOr<value> where
// the value is an int64_t, double, bool or std::string.
template <typename M, typename Read>
SpecKey<M> ProtoFieldKey(const std::string& name, KeyKind kind, Read read) {
  const google::protobuf::FieldDescriptor* field = M::descriptor()->FindFieldByName(name);
  SpecKey<M> key;
  key.info.name = name;
  key.info.kind = kind;
  key.read = [field, read](const YAML::Node& v, const std::string& path, M* m) -> absl::Status {
    auto value = read(v, path);
    if (!value.ok()) return value.status();
    SetScalarField(m, field, spec_keys_internal::ScalarOf(*value));
    return absl::OkStatus();
  };
  key.equal = [field](const M& a, const M& b) {
    return GetScalarField(a, field) == GetScalarField(b, field);
  };
  key.write = [field](const M& m, const KeyInfo& self, SpecWriter* out) {
    out->Scalar(self, GetScalarField(m, field));
  };
  key.reset = [field](M* m) { m->GetReflection()->ClearField(m, field); };
  return key;
}

template <typename M>
SpecKey<M> ProtoStringKey(const std::string& name) {
  return ProtoFieldKey<M>(name, KeyKind::kString, yaml_util::ReadString);
}

// A string field from a fixed set of words, read case-insensitively.
template <typename M>
SpecKey<M> ProtoWordKey(const std::string& name, const std::vector<std::string>& words) {
  SpecKey<M> key = ProtoFieldKey<M>(name, KeyKind::kEnum, WordReader(words));
  key.info.names = words;
  return key;
}

// An integer field in [min, max].
template <typename M>
SpecKey<M> ProtoIntKey(const std::string& name, int64_t min, int64_t max) {
  SpecKey<M> key =
      ProtoFieldKey<M>(name, KeyKind::kInteger, [min, max](const YAML::Node& v, const std::string& path) {
        return yaml_util::ReadInt(v, path, min, max);
      });
  key.info.min = static_cast<double>(min);
  key.info.max = static_cast<double>(max);
  return key;
}

template <typename M>
SpecKey<M> ProtoBoolKey(const std::string& name) {
  return ProtoFieldKey<M>(name, KeyKind::kBoolean, yaml_util::ReadBool);
}

// A number field in [min, max], an open bound excluding its value.
template <typename M>
SpecKey<M> ProtoNumberKey(const std::string& name, double min, double max, bool min_open, bool max_open) {
  SpecKey<M> key = ProtoFieldKey<M>(name, KeyKind::kNumber, NumberReader(min, max, min_open, max_open));
  SetRange(&key.info, min, max, min_open, max_open);
  return key;
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_PROTO_KEYS_H_
