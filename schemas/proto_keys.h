// Key-table builders for blocks that are read straight into a proto message (the sweep file's early_stopping
// and search): the key is the field of that name, reached through the message's descriptor and reflection,
// with its range or words declared in the table (schemas/spec_keys.h).
#ifndef NMSPARSE_SCHEMAS_PROTO_KEYS_H_
#define NMSPARSE_SCHEMAS_PROTO_KEYS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "schemas/spec_keys.h"

namespace nmsparse {
namespace proto_keys_internal {

// A key of message type M: the field of the same name.
template <typename M>
SpecKey<M> FieldKey(const std::string& name, KeyKind kind) {
  const google::protobuf::FieldDescriptor* field = M::descriptor()->FindFieldByName(name);
  SpecKey<M> key;
  key.info.name = name;
  key.info.kind = kind;
  key.equal = [field](const M& a, const M& b) {
    const auto* r = a.GetReflection();
    switch (field->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        return r->GetString(a, field) == r->GetString(b, field);
      case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
        return r->GetDouble(a, field) == r->GetDouble(b, field);
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT32:
        return r->GetUInt32(a, field) == r->GetUInt32(b, field);
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        return r->GetUInt64(a, field) == r->GetUInt64(b, field);
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
        return r->GetInt32(a, field) == r->GetInt32(b, field);
      case google::protobuf::FieldDescriptor::CPPTYPE_BOOL:
        return r->GetBool(a, field) == r->GetBool(b, field);
      default:
        return false;
    }
  };
  key.reset = [field](M* m) { m->GetReflection()->ClearField(m, field); };
  key.write = [field](const M& m, const KeyInfo& self, SpecWriter* out) {
    const auto* r = m.GetReflection();
    switch (field->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        return out->Scalar(self, r->GetString(m, field));
      case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
        return out->Scalar(self, r->GetDouble(m, field));
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT32:
        return out->Scalar(self, static_cast<int64_t>(r->GetUInt32(m, field)));
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        return out->Scalar(self, static_cast<int64_t>(r->GetUInt64(m, field)));
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
        return out->Scalar(self, static_cast<int64_t>(r->GetInt32(m, field)));
      case google::protobuf::FieldDescriptor::CPPTYPE_BOOL:
        return out->Scalar(self, r->GetBool(m, field));
      default:
        return;
    }
  };
  return key;
}

}  // namespace proto_keys_internal

// A string field.
template <typename M>
SpecKey<M> ProtoStringKey(const std::string& name) {
  SpecKey<M> key = proto_keys_internal::FieldKey<M>(name, KeyKind::kString);
  const auto* field = M::descriptor()->FindFieldByName(name);
  key.read = [field](const YAML::Node& v, const std::string& path, M* m) -> absl::Status {
    auto r = yaml_util::ReadString(v, path);
    if (!r.ok()) return r.status();
    m->GetReflection()->SetString(m, field, *r);
    return absl::OkStatus();
  };
  return key;
}

// A string field from a fixed set of words, read case-insensitively.
template <typename M>
SpecKey<M> ProtoWordKey(const std::string& name, const std::vector<std::string>& words) {
  SpecKey<M> key = proto_keys_internal::FieldKey<M>(name, KeyKind::kEnum);
  key.info.names = words;
  const auto* field = M::descriptor()->FindFieldByName(name);
  std::vector<std::pair<std::string, std::string>> names;
  for (const std::string& w : words) names.emplace_back(w, w);
  key.read = [field, names](const YAML::Node& v, const std::string& path, M* m) -> absl::Status {
    auto r = yaml_util::ReadEnum(v, path, names);
    if (!r.ok()) return r.status();
    m->GetReflection()->SetString(m, field, *r);
    return absl::OkStatus();
  };
  return key;
}

// An integer field (int32, uint32 or uint64) in [min, max].
template <typename M>
SpecKey<M> ProtoIntKey(const std::string& name, int64_t min, int64_t max) {
  SpecKey<M> key = proto_keys_internal::FieldKey<M>(name, KeyKind::kInteger);
  key.info.min = static_cast<double>(min);
  key.info.max = static_cast<double>(max);
  const auto* field = M::descriptor()->FindFieldByName(name);
  key.read = [field, min, max](const YAML::Node& v, const std::string& path, M* m) -> absl::Status {
    auto r = yaml_util::ReadInt(v, path, min, max);
    if (!r.ok()) return r.status();
    const auto* reflection = m->GetReflection();
    switch (field->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        reflection->SetUInt64(m, field, static_cast<uint64_t>(*r));
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32:
        reflection->SetInt32(m, field, static_cast<int32_t>(*r));
        break;
      default:
        reflection->SetUInt32(m, field, static_cast<uint32_t>(*r));
    }
    return absl::OkStatus();
  };
  return key;
}

template <typename M>
SpecKey<M> ProtoBoolKey(const std::string& name) {
  SpecKey<M> key = proto_keys_internal::FieldKey<M>(name, KeyKind::kBoolean);
  const auto* field = M::descriptor()->FindFieldByName(name);
  key.read = [field](const YAML::Node& v, const std::string& path, M* m) -> absl::Status {
    auto r = yaml_util::ReadBool(v, path);
    if (!r.ok()) return r.status();
    m->GetReflection()->SetBool(m, field, *r);
    return absl::OkStatus();
  };
  return key;
}

// A number field in (min, max) with the given open bounds.
template <typename M>
SpecKey<M> ProtoNumberKey(const std::string& name, double min, double max, bool min_open, bool max_open) {
  SpecKey<M> key = proto_keys_internal::FieldKey<M>(name, KeyKind::kNumber);
  key.info.min = min;
  key.info.max = max;
  key.info.min_open = min_open;
  key.info.max_open = max_open;
  const auto* field = M::descriptor()->FindFieldByName(name);
  key.read = [field, min, max, min_open, max_open](const YAML::Node& v, const std::string& path,
                                                   M* m) -> absl::Status {
    auto r = ReadNumberIn(v, path, min, max, min_open, max_open);
    if (!r.ok()) return r.status();
    m->GetReflection()->SetDouble(m, field, *r);
    return absl::OkStatus();
  };
  return key;
}

}  // namespace nmsparse

#endif  // NMSPARSE_SCHEMAS_PROTO_KEYS_H_
