#include "schemas/proto_keys.h"

#include <string>
#include <variant>

#include "absl/strings/str_join.h"

namespace nmsparse {

using google::protobuf::FieldDescriptor;

bool SetScalarField(google::protobuf::Message* message, const FieldDescriptor* field,
                    const SpecScalar& value) {
  const google::protobuf::Reflection* r = message->GetReflection();
  const auto type = field->cpp_type();
  if (const auto* i = std::get_if<int64_t>(&value)) {
    if (type == FieldDescriptor::CPPTYPE_INT32) r->SetInt32(message, field, static_cast<int32_t>(*i));
    if (type == FieldDescriptor::CPPTYPE_INT64) r->SetInt64(message, field, *i);
    if (type == FieldDescriptor::CPPTYPE_UINT32) r->SetUInt32(message, field, static_cast<uint32_t>(*i));
    if (type == FieldDescriptor::CPPTYPE_UINT64) r->SetUInt64(message, field, static_cast<uint64_t>(*i));
    return type == FieldDescriptor::CPPTYPE_INT32 || type == FieldDescriptor::CPPTYPE_INT64 ||
           type == FieldDescriptor::CPPTYPE_UINT32 || type == FieldDescriptor::CPPTYPE_UINT64;
  }
  if (const auto* d = std::get_if<double>(&value)) {
    if (type == FieldDescriptor::CPPTYPE_DOUBLE) r->SetDouble(message, field, *d);
    if (type == FieldDescriptor::CPPTYPE_FLOAT) r->SetFloat(message, field, static_cast<float>(*d));
    return type == FieldDescriptor::CPPTYPE_DOUBLE || type == FieldDescriptor::CPPTYPE_FLOAT;
  }
  if (const auto* b = std::get_if<bool>(&value)) {
    if (type == FieldDescriptor::CPPTYPE_BOOL) r->SetBool(message, field, *b);
    return type == FieldDescriptor::CPPTYPE_BOOL;
  }
  const std::string text(std::get<absl::string_view>(value));
  if (type == FieldDescriptor::CPPTYPE_STRING) r->SetString(message, field, text);
  if (type != FieldDescriptor::CPPTYPE_ENUM) return type == FieldDescriptor::CPPTYPE_STRING;
  const auto* v = field->enum_type()->FindValueByName(yaml_util::Upper(text));  // Enum values by name.
  if (v != nullptr) r->SetEnum(message, field, v);
  return v != nullptr;
}

SpecScalar GetScalarField(const google::protobuf::Message& message, const FieldDescriptor* field) {
  const google::protobuf::Reflection* r = message.GetReflection();
  const auto type = field->cpp_type();
  if (type == FieldDescriptor::CPPTYPE_STRING) {
    std::string scratch;  // Only cords use it; the spec's strings are plain.
    return absl::string_view(r->GetStringReference(message, field, &scratch));
  }
  if (type == FieldDescriptor::CPPTYPE_ENUM) return absl::string_view(r->GetEnum(message, field)->name());
  if (type == FieldDescriptor::CPPTYPE_BOOL) return r->GetBool(message, field);
  if (type == FieldDescriptor::CPPTYPE_DOUBLE) return r->GetDouble(message, field);
  if (type == FieldDescriptor::CPPTYPE_FLOAT) return static_cast<double>(r->GetFloat(message, field));
  // Integers of every width.
  if (type == FieldDescriptor::CPPTYPE_INT32) return static_cast<int64_t>(r->GetInt32(message, field));
  if (type == FieldDescriptor::CPPTYPE_INT64) return r->GetInt64(message, field);
  if (type == FieldDescriptor::CPPTYPE_UINT32) return static_cast<int64_t>(r->GetUInt32(message, field));
  return static_cast<int64_t>(r->GetUInt64(message, field));
}

absl::Status CheckWireWords(const google::protobuf::Message& message, const KeyInfo& key,
                            const std::string& path) {
  const bool word = key.kind == KeyKind::kEnum;
  if (!word && !(key.required && key.kind == KeyKind::kString)) return absl::OkStatus();
  const FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(key.name);
  const SpecScalar value = GetScalarField(message, field);
  const absl::string_view text = std::get<absl::string_view>(value);
  const std::string where = KeyPath(path, key.name) + ": value '" + std::string(text) + "' ";
  if (!word) {
    return text.empty() ? absl::InvalidArgumentError(where + "is empty: give " + key.doc) : absl::OkStatus();
  }
  for (const std::string& name : key.names) {
    if (text == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(where + "is not one of " + absl::StrJoin(key.names, ", "));
}

}  // namespace nmsparse
