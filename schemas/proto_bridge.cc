#include "schemas/proto_bridge.h"

#include <cstdlib>
#include <iostream>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
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

// Sets (or, for repeated fields, adds) one scalar or message value.
absl::Status SetValue(const YAML::Node& node, Message* msg, const FieldDescriptor* field,
                      const std::string& path) {
  const Reflection* r = msg->GetReflection();
  const bool rep = field->is_repeated();
  using Limits32 = std::numeric_limits<int32_t>;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      Message* sub = rep ? r->AddMessage(msg, field) : r->MutableMessage(msg, field);
      return YamlToMessage(node, sub, path);
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      auto v = yaml_util::ReadInt(node, path, Limits32::min(), Limits32::max());
      if (!v.ok()) return v.status();
      rep ? r->AddInt32(msg, field, *v) : r->SetInt32(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      auto v = yaml_util::ReadInt(node, path);
      if (!v.ok()) return v.status();
      rep ? r->AddInt64(msg, field, *v) : r->SetInt64(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      auto v = yaml_util::ReadInt(node, path, 0, std::numeric_limits<uint32_t>::max());
      if (!v.ok()) return v.status();
      rep ? r->AddUInt32(msg, field, *v) : r->SetUInt32(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      auto v = yaml_util::ReadInt(node, path, 0);
      if (!v.ok()) return v.status();
      rep ? r->AddUInt64(msg, field, *v) : r->SetUInt64(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      auto v = yaml_util::ReadDouble(node, path);
      if (!v.ok()) return v.status();
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        rep ? r->AddFloat(msg, field, *v) : r->SetFloat(msg, field, *v);
      } else {
        rep ? r->AddDouble(msg, field, *v) : r->SetDouble(msg, field, *v);
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      auto v = yaml_util::ReadBool(node, path);
      if (!v.ok()) return v.status();
      rep ? r->AddBool(msg, field, *v) : r->SetBool(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      auto v = yaml_util::ReadString(node, path);
      if (!v.ok()) return v.status();
      rep ? r->AddString(msg, field, *v) : r->SetString(msg, field, *v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      auto v = ReadEnumValue(node, field->enum_type(), path);
      if (!v.ok()) return v.status();
      rep ? r->AddEnum(msg, field, *v) : r->SetEnum(msg, field, *v);
      return absl::OkStatus();
    }
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

YAML::Node ScalarToYaml(const Message& msg, const FieldDescriptor* field, int index) {
  const Reflection* r = msg.GetReflection();
  const bool rep = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return MessageToYaml(rep ? r->GetRepeatedMessage(msg, field, index) : r->GetMessage(msg, field));
    case FieldDescriptor::CPPTYPE_INT32:
      return YAML::Node(absl::StrCat(rep ? r->GetRepeatedInt32(msg, field, index) : r->GetInt32(msg, field)));
    case FieldDescriptor::CPPTYPE_INT64:
      return YAML::Node(absl::StrCat(rep ? r->GetRepeatedInt64(msg, field, index) : r->GetInt64(msg, field)));
    case FieldDescriptor::CPPTYPE_UINT32:
      return YAML::Node(
          absl::StrCat(rep ? r->GetRepeatedUInt32(msg, field, index) : r->GetUInt32(msg, field)));
    case FieldDescriptor::CPPTYPE_UINT64:
      return YAML::Node(
          absl::StrCat(rep ? r->GetRepeatedUInt64(msg, field, index) : r->GetUInt64(msg, field)));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return YAML::Node(
          yaml_util::FormatDouble(rep ? r->GetRepeatedDouble(msg, field, index) : r->GetDouble(msg, field)));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return YAML::Node(
          yaml_util::FormatDouble(rep ? r->GetRepeatedFloat(msg, field, index) : r->GetFloat(msg, field)));
    case FieldDescriptor::CPPTYPE_BOOL:
      return YAML::Node((rep ? r->GetRepeatedBool(msg, field, index) : r->GetBool(msg, field)) ? "true"
                                                                                               : "false");
    case FieldDescriptor::CPPTYPE_STRING:
      return YAML::Node(rep ? r->GetRepeatedString(msg, field, index) : r->GetString(msg, field));
    case FieldDescriptor::CPPTYPE_ENUM:
      return YAML::Node((rep ? r->GetRepeatedEnum(msg, field, index) : r->GetEnum(msg, field))->name());
  }
  return YAML::Node();
}

// Whether MessageToYaml writes a singular field (see the header).
bool Written(const Message& msg, const FieldDescriptor* field) {
  const Reflection* r = msg.GetReflection();
  if (field->containing_oneof() != nullptr) return r->HasField(msg, field);  // Only the member that is set.
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return r->HasField(msg, field);
    case FieldDescriptor::CPPTYPE_STRING:
      return !r->GetString(msg, field).empty();
    case FieldDescriptor::CPPTYPE_ENUM:
      return r->GetEnumValue(msg, field) != 0;
    default:
      return true;
  }
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
    const YAML::Node& value = kv.second;
    if (yaml_util::IsNullish(value)) continue;
    if (field->is_map()) {
      if (auto st = SetMap(value, message, field, key_path); !st.ok()) return st;
    } else if (field->is_repeated()) {
      if (!value.IsSequence())
        return Error(value, key_path, "value " + yaml_util::Describe(value) + " is not a list");
      for (size_t i = 0; i < value.size(); ++i) {
        if (auto st = SetValue(value[i], message, field, absl::StrCat(key_path, "[", i, "]")); !st.ok())
          return st;
      }
    } else {
      if (auto st = SetValue(value, message, field, key_path); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

YAML::Node MessageToYaml(const Message& message) {
  YAML::Node out(YAML::NodeType::Map);
  const Descriptor* type = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    if (field->is_map()) {
      const int n = r->FieldSize(message, field);
      if (n == 0) continue;
      YAML::Node map(YAML::NodeType::Map);
      for (int j = 0; j < n; ++j) {
        const Message& entry = r->GetRepeatedMessage(message, field, j);
        const Descriptor* entry_type = entry.GetDescriptor();
        YAML::Node key = ScalarToYaml(entry, entry_type->FindFieldByName("key"), -1);
        map[key.Scalar()] = ScalarToYaml(entry, entry_type->FindFieldByName("value"), -1);
      }
      out[field->name()] = map;
    } else if (field->is_repeated()) {
      const int n = r->FieldSize(message, field);
      if (n == 0) continue;
      YAML::Node list(YAML::NodeType::Sequence);
      for (int j = 0; j < n; ++j) list.push_back(ScalarToYaml(message, field, j));
      out[field->name()] = list;
    } else if (Written(message, field)) {
      out[field->name()] = ScalarToYaml(message, field, -1);
    }
  }
  return out;
}

v1::ExperimentSpec ToProtoViaYaml(const ExperimentConfig& config) {
  v1::ExperimentSpec spec;
  const absl::Status st = YamlToMessage(ExperimentConfigToYaml(config), &spec);
  if (!st.ok()) {  // The canonical YAML and experiment.proto are kept in step by proto_bridge_test.
    std::cerr << "nmsparse: canonical spec does not fit experiment.proto: " << st << "\n";
    std::abort();
  }
  return spec;
}

absl::StatusOr<ExperimentConfig> FromProto(const v1::ExperimentSpec& spec) {
  return ParseExperimentNode(MessageToYaml(spec), "");
}

}  // namespace nmsparse
