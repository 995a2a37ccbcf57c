#include "schemas/testing/legacy_wire.h"

#include <cstdlib>
#include <iostream>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "nmsparse/legacy/experiment_spec.pb.h"
#include "proto/field_value.h"
#include "schemas/yaml_util.h"

namespace nmsparse::testing {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using yaml_util::Error;

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

absl::StatusOr<const google::protobuf::EnumValueDescriptor*> ReadEnumValue(const YAML::Node& node,
                                                                           const EnumDescriptor* type,
                                                                           const std::string& path) {
  auto text = yaml_util::ReadString(node, path);
  if (!text.ok()) return text.status();
  const std::string upper = yaml_util::Upper(*text);
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    const auto* value = type->value(i);
    if (value->number() == 0) continue;  // UNSPECIFIED is the absence of a value, never written.
    if (value->name() == upper) return value;
    names.push_back(value->name());
  }
  return Error(node, path, "value '" + *text + "' is not one of " + absl::StrJoin(names, ", "));
}

// Stores what `read` gave, as the field's C++ type T.
template <typename T, typename V>
absl::Status StoreRead(absl::StatusOr<V> read, Message* msg, const FieldDescriptor* field) {
  if (!read.ok()) return read.status();
  StoreFieldValue<T>(msg, field, *std::move(read));
  return absl::OkStatus();
}

// Sets (or, for repeated fields, adds) one scalar or message value.
absl::Status SetValue(const YAML::Node& node, Message* msg, const FieldDescriptor* field,
                      const std::string& path) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      const Reflection* r = msg->GetReflection();
      Message* sub = field->is_repeated() ? r->AddMessage(msg, field) : r->MutableMessage(msg, field);
      return YamlToMessage(node, sub, path);
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      using Limits32 = std::numeric_limits<int32_t>;
      return StoreRead<int32_t>(yaml_util::ReadInt(node, path, Limits32::min(), Limits32::max()), msg, field);
    }
    case FieldDescriptor::CPPTYPE_INT64:
      return StoreRead<int64_t>(yaml_util::ReadInt(node, path), msg, field);
    case FieldDescriptor::CPPTYPE_UINT32:
      return StoreRead<uint32_t>(yaml_util::ReadInt(node, path, 0, std::numeric_limits<uint32_t>::max()), msg,
                                 field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return StoreRead<uint64_t>(yaml_util::ReadInt(node, path, 0), msg, field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return StoreRead<double>(yaml_util::ReadDouble(node, path), msg, field);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return StoreRead<float>(yaml_util::ReadDouble(node, path), msg, field);
    case FieldDescriptor::CPPTYPE_BOOL:
      return StoreRead<bool>(yaml_util::ReadBool(node, path), msg, field);
    case FieldDescriptor::CPPTYPE_STRING:
      return StoreRead<std::string>(yaml_util::ReadString(node, path), msg, field);
    case FieldDescriptor::CPPTYPE_ENUM:
      return StoreRead<const google::protobuf::EnumValueDescriptor*>(
          ReadEnumValue(node, field->enum_type(), path), msg, field);
  }
  return Error(node, path, "unsupported field type");
}

absl::Status SetMap(const YAML::Node& node, Message* msg, const FieldDescriptor* field,
                    const std::string& path) {
  if (!node.IsMap()) return Error(node, path, "value " + yaml_util::Describe(node) + " is not a map");
  const Descriptor* entry_type = field->message_type();
  for (const auto& kv : node) {
    Message* entry = msg->GetReflection()->AddMessage(msg, field);
    const std::string key_path = Join(path, kv.first.as<std::string>());
    if (auto st = SetValue(kv.first, entry, entry_type->FindFieldByName("key"), key_path); !st.ok())
      return st;
    if (auto st = SetValue(kv.second, entry, entry_type->FindFieldByName("value"), key_path); !st.ok())
      return st;
  }
  return absl::OkStatus();
}

// Sets field `field` of `msg` from a YAML value: a map field, a list, or one value.
absl::Status SetField(const YAML::Node& value, Message* msg, const FieldDescriptor* field,
                      const std::string& path) {
  if (field->is_map()) return SetMap(value, msg, field, path);
  if (!field->is_repeated()) return SetValue(value, msg, field, path);
  if (!value.IsSequence())
    return Error(value, path, "value " + yaml_util::Describe(value) + " is not a list");
  for (size_t i = 0; i < value.size(); ++i) {
    if (auto st = SetValue(value[i], msg, field, absl::StrCat(path, "[", i, "]")); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status YamlToMessage(const YAML::Node& node, Message* message, const std::string& path) {
  message->Clear();
  if (yaml_util::IsNullish(node)) return absl::OkStatus();
  const Descriptor* type = message->GetDescriptor();
  if (!node.IsMap()) {
    return Error(node, path.empty() ? "(top level)" : path,
                 "value " + yaml_util::Describe(node) + " is not a map of " + type->name() + " fields");
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string key_path = Join(path, key);
    const FieldDescriptor* field = type->FindFieldByName(key);
    if (field == nullptr) {
      std::vector<std::string> names;
      for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
      return Error(kv.first, key_path, "unknown key; known keys: " + absl::StrJoin(names, ", "));
    }
    if (yaml_util::IsNullish(kv.second)) continue;
    if (auto st = SetField(kv.second, message, field, key_path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

std::string LegacyWireBytes(const ExperimentConfig& config) {
  legacy::ExperimentSpec spec;
  const absl::Status st = YamlToMessage(ExperimentConfigToYaml(config), &spec);
  if (!st.ok()) {
    std::cerr << "canonical spec does not fit the legacy ExperimentSpec: " << st << "\n";
    std::abort();
  }
  return spec.SerializeAsString();
}

}  // namespace nmsparse::testing
