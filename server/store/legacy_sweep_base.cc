#include "server/store/legacy_sweep_base.h"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/unknown_field_set.h"
#include "nmsparse/legacy/experiment_spec.pb.h"
#include "nmsparse/v1/sweep.pb.h"
#include "proto/field_value.h"
#include "schemas/base_spec.h"
#include "schemas/experiment_config.h"
#include "schemas/yaml_util.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr int kLegacyBaseField = 2;  // v1.SweepSpec's `ExperimentSpec base = 2` of wire version 1.

YAML::Node MessageYaml(const Message& message);

YAML::Node ValueYaml(const Message& msg, const FieldDescriptor* field, int index) {
  return VisitFieldValue(msg, field, index, [](const auto& value) -> YAML::Node {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, Message>) {
      return MessageYaml(value);
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

// Whether version 1 wrote a singular field: set messages and optional fields, non-empty strings, enums past
// UNSPECIFIED, and every number and bool (0 is meaningful, e.g. weight_decay: 0).
bool Written(const Message& msg, const FieldDescriptor* field) {
  const auto* r = msg.GetReflection();
  if (field->has_presence()) return r->HasField(msg, field);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) return !r->GetString(msg, field).empty();
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) return r->GetEnumValue(msg, field) != 0;
  return true;
}

// The YAML map version 1's coordinator expanded a base from (its MessageToYaml): field names as keys.
YAML::Node MessageYaml(const Message& message) {
  YAML::Node out(YAML::NodeType::Map);
  const auto* type = message.GetDescriptor();
  const auto* r = message.GetReflection();
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    if (field->is_repeated()) {  // The spec messages have no map fields.
      const int n = r->FieldSize(message, field);
      if (n == 0) continue;
      YAML::Node list(YAML::NodeType::Sequence);
      for (int j = 0; j < n; ++j) list.push_back(ValueYaml(message, field, j));
      out[field->name()] = list;
    } else if (Written(message, field)) {
      out[field->name()] = ValueYaml(message, field, -1);
    }
  }
  return out;
}

// The stored spec with its version-1 base as YAML text; nullopt-like empty string when it has none.
absl::StatusOr<std::string> ConvertedSpec(int64_t sweep_id, const std::string& stored) {
  v1::SweepSpec spec;
  if (!spec.ParseFromString(stored))
    return absl::DataLossError(absl::StrCat("sweep ", sweep_id, ": bad spec"));
  google::protobuf::UnknownFieldSet* unknown = spec.GetReflection()->MutableUnknownFields(&spec);
  std::string legacy_bytes;
  bool found = false;
  for (int i = 0; i < unknown->field_count(); ++i) {
    const google::protobuf::UnknownField& f = unknown->field(i);
    if (f.number() != kLegacyBaseField || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    legacy_bytes += f.length_delimited();  // Repeated occurrences of a message field merge.
    found = true;
  }
  if (!found) return std::string();
  legacy::ExperimentSpec base;
  if (!base.ParseFromString(legacy_bytes)) {
    return absl::DataLossError(absl::StrCat("sweep ", sweep_id, ": its version-1 base does not parse"));
  }
  absl::StatusOr<ExperimentConfig> config = ParseExperimentNode(MessageYaml(base), "");
  if (!config.ok()) {
    return absl::DataLossError(
        absl::StrCat("sweep ", sweep_id, ": version-1 base: ", config.status().message()));
  }
  unknown->DeleteByNumber(kLegacyBaseField);
  spec.set_base(BaseSpecYaml(*config));
  return spec.SerializeAsString();
}

}  // namespace

absl::Status ConvertLegacySweepBases(Database* db) {
  std::vector<std::pair<int64_t, std::string>> converted;
  {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("SELECT id, spec FROM sweeps ORDER BY id"));
    while (true) {
      NM_ASSIGN_OR_RETURN(bool row, st->Step());
      if (!row) break;
      NM_ASSIGN_OR_RETURN(std::string spec, ConvertedSpec(st->Int(0), st->Text(1)));
      if (!spec.empty()) converted.emplace_back(st->Int(0), std::move(spec));
    }
  }
  for (const auto& [id, spec] : converted) {
    NM_ASSIGN_OR_RETURN(Stmt st, db->Prepare("UPDATE sweeps SET spec = ? WHERE id = ?"));
    NM_RETURN_IF_ERROR(st->BindBlob(1, spec).Bind(2, id).Run());
  }
  return absl::OkStatus();
}

}  // namespace nmsparse::server
