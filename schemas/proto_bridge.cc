#include "schemas/proto_bridge.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "proto/field_value.h"
#include "schemas/proto_keys.h"
#include "schemas/spec_keys.h"
#include "schemas/trained_epochs.h"
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

// Writes a spec's key table into a message: each key is the field of that name (experiment.proto mirrors
// the spec). A key without its field is a programming error that spec_keys_test catches; it aborts here.
class ProtoWriter : public SpecWriter {
 public:
  explicit ProtoWriter(Message* root) {
    stack_.reserve(4);
    stack_.push_back({root, root->GetReflection()});
  }

  void Scalar(const KeyInfo& key, const SpecScalar& value) override {
    Message* msg = stack_.back().first;
    const FieldDescriptor* field = FieldOf(*msg, key);
    // Proto3 scalars: zero is the absence of a value, never serialized; an optional field keeps its zero.
    if (IsZero(value) && !field->has_presence()) return;
    if (!SetScalarField(msg, field, value)) Die(*msg, key.name + " = " + ScalarText(value));
  }

  void Collection(const KeyInfo& key, const YAML::Node& value) override {
    if (value.IsSequence() && value.size() == 0) return;  // An empty repeated field.
    Message* msg = stack_.back().first;
    const absl::Status st = SetField(value, msg, FieldOf(*msg, key), key.name);
    if (!st.ok()) Die(*msg, std::string(st.message()));
  }

  void EmptyList(const KeyInfo& /*key*/) override {}  // An empty repeated field.

  void BeginSection(const KeyInfo& key) override {
    auto [msg, r] = stack_.back();
    Message* section = r->MutableMessage(msg, FieldOf(*msg, key));
    stack_.push_back({section, section->GetReflection()});
  }

  void EndSection() override { stack_.pop_back(); }

 private:
  [[noreturn]] static void Die(const Message& msg, const std::string& what) {
    std::cerr << "nmsparse: spec key does not fit " << msg.GetDescriptor()->full_name() << ": " << what
              << "\n";
    std::abort();
  }

  static bool IsZero(const SpecScalar& value) {
    if (const auto* i = std::get_if<int64_t>(&value)) return *i == 0;
    if (const auto* d = std::get_if<double>(&value)) return *d == 0.0 && !std::signbit(*d);
    if (const auto* b = std::get_if<bool>(&value)) return !*b;
    return std::get<absl::string_view>(value).empty();
  }

  // The field named like `key`, remembered in the key (a table's keys always go to one message type).
  static const FieldDescriptor* FieldOf(const Message& msg, const KeyInfo& key) {
    const Descriptor* type = msg.GetDescriptor();
    auto* field = static_cast<const FieldDescriptor*>(key.wire.field.load(std::memory_order_acquire));
    if (field == nullptr || field->containing_type() != type) {
      field = type->FindFieldByName(key.name);
      if (field == nullptr) Die(msg, key.name);
      key.wire.field.store(field, std::memory_order_release);
    }
    return field;
  }

  std::vector<std::pair<Message*, const Reflection*>> stack_;
};

YAML::Node ScalarToYaml(const Message& msg, const FieldDescriptor* field, int index) {
  return VisitFieldValue(msg, field, index, [](const auto& value) -> YAML::Node {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, Message>) {
      return MessageToYaml(value);
    } else if constexpr (std::is_same_v<T, const google::protobuf::EnumValueDescriptor*>) {
      return YAML::Node(value->name());
    } else if constexpr (std::is_same_v<T, bool>) {
      return YAML::Node(value ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<T>) {
      return YAML::Node(yaml_util::FormatDouble(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      return YAML::Node(value);
    } else {
      return YAML::Node(absl::StrCat(value));
    }
  });
}

// Whether MessageToYaml writes a singular field (see the header).
bool Written(const Message& msg, const FieldDescriptor* field) {
  const Reflection* r = msg.GetReflection();
  if (field->containing_oneof() != nullptr) return r->HasField(msg, field);  // Only the member that is set.
  if (field->has_presence()) return r->HasField(msg, field);                 // An optional field, when set.
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
    if (yaml_util::IsNullish(kv.second)) continue;
    if (auto st = SetField(kv.second, message, field, key_path); !st.ok()) return st;
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

v1::ExperimentSpec ToProto(const ExperimentConfig& config) {
  v1::ExperimentSpec spec;
  ProtoWriter writer(&spec);
  ExperimentKeys().Write(config, &writer);
  return spec;
}

absl::StatusOr<ExperimentConfig> FromProto(const v1::ExperimentSpec& spec) {
  return ParseExperimentNode(MessageToYaml(spec), "");
}

int TrainedEpochs(const v1::ExperimentSpec& spec) {
  const absl::StatusOr<ExperimentConfig> config = FromProto(spec);
  return config.ok() ? TrainedEpochs(config->schedule) : static_cast<int>(spec.schedule().epochs());
}

}  // namespace nmsparse
