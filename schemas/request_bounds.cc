#include "schemas/request_bounds.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/unknown_field_set.h"
#include "schemas/limits.h"

namespace nmsparse {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// One field's bound. Zero means the default: kMaxStringBytes for a string, kMaxRepeatedCount for a repeated
// field, and no bound on a message field's serialized size.
struct Bound {
  int64_t bytes = 0;  // Each string of the field; a message field: its serialized size.
  int64_t count = 0;  // Entries of a repeated or map field.
  bool cut = false;   // Past `bytes`, a worker's report is cut (CutAndCheckReportBounds), not refused.
};

Bound Bytes(int64_t bytes) { return {bytes, 0, false}; }
Bound Count(int64_t count) { return {0, count, false}; }
Bound Each(int64_t bytes, int64_t count) { return {bytes, count, false}; }
Bound Cut(int64_t bytes) { return {bytes, 0, true}; }

// Every string, bytes, repeated and map field of the two services' requests, by full name (map entries as
// protoc names them: field `set` of AxisValue has entries AxisValue.SetEntry). request_bounds_test checks
// that each request field is here, so that a new one gets a bound chosen for it, not only the default.
const absl::flat_hash_map<std::string, Bound>& Table() {
  using namespace limits;  // NOLINT: the table reads better with the bare names.
  static const auto* table = new absl::flat_hash_map<std::string, Bound>{
      // Coordinator requests.
      {"nmsparse.v1.SubmitSweepRequest.spec", Bytes(kMaxSweepSpecBytes)},
      {"nmsparse.v1.ForkRunRequest.set", Each(kMaxValueTextBytes, kMaxRepeatedCount)},
      {"nmsparse.v1.GetBestRequest.metric", Bytes(kMaxNameBytes)},
      // A sweep spec.
      {"nmsparse.v1.SweepSpec.name", Bytes(kMaxNameBytes)},
      // The base spec is YAML text, bounded as a spec file is; its keys are the key table's to check.
      {"nmsparse.v1.SweepSpec.base", Bytes(kMaxSpecFileBytes)},
      {"nmsparse.v1.SweepSpec.idempotency_key", Bytes(kMaxIdempotencyKeyBytes)},
      {"nmsparse.v1.SweepSpec.grid", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.SweepSpec.random", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.GridAxis.name", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.GridAxis.values", Count(kMaxAxisValues)},
      {"nmsparse.v1.AxisValue.label", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.AxisValue.set", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.AxisValue.SetEntry.key", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.AxisValue.SetEntry.value", Bytes(kMaxValueTextBytes)},
      {"nmsparse.v1.RandomAxis.key", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.RandomAxis.choices", Each(kMaxValueTextBytes, kMaxAxisValues)},
      {"nmsparse.v1.EarlyStopping.policy", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.EarlyStopping.metric", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.EarlyStopping.mode", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.EarlyStopping.resource", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.Search.algorithm", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.Search.metric", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.Search.mode", Bytes(kMaxNameBytes)},
      // WorkerGateway requests.
      {"nmsparse.v1.RegisterRequest.host", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.RegisterRequest.slots", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.RegisterRequest.running", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.RegisterRequest.job", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.RegisterRequest.advertise_addr", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.RegisterRequest.storage", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.Slot.name", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.HeartbeatRequest.running", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.MetricPoint.kind", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.MetricPoint.values", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.MetricPoint.ValuesEntry.key", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.MetricPoint.labels", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.MetricPoint.LabelsEntry.key", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.MetricPoint.LabelsEntry.value", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.LogReport.lines", Count(kMaxRepeatedCount)},
      {"nmsparse.v1.LogLine.text", Cut(kMaxLogLineBytes)},
      {"nmsparse.v1.CompleteRunRequest.message", Cut(kMaxRunMessageBytes)},
      {"nmsparse.v1.ModelFileChunk.file", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.ModelFileChunk.data", Bytes(kModelExportChunkBytes)},
      {"nmsparse.v1.ModelFileChunk.sha256", Bytes(kMaxNameBytes)},
      {"nmsparse.v1.ModelExportUpload.error", Cut(kMaxRunMessageBytes)},
  };
  return *table;
}

bool IsText(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_STRING;  // string and bytes.
}

// The field's bound with the defaults filled in.
Bound BoundOf(const FieldDescriptor* field) {
  auto it = Table().find(field->full_name());
  Bound bound = it == Table().end() ? Bound{} : it->second;
  if (bound.bytes == 0 && IsText(field)) bound.bytes = limits::kMaxStringBytes;
  if (bound.count == 0 && field->is_repeated()) bound.count = limits::kMaxRepeatedCount;
  return bound;
}

absl::Status Past(const std::string& path, int64_t size, const char* unit, int64_t limit) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", limits::FormatCount(size), " ", unit,
                                                 ", more than the limit of ", limits::FormatCount(limit), " ",
                                                 unit));
}

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : absl::StrCat(prefix, ".", name);
}

// Bytes a message's unknown fields carry (8 for each number, as a varint's worst case).
int64_t UnknownBytes(const UnknownFieldSet& set) {
  int64_t bytes = 0;
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& field = set.field(i);
    if (field.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
      bytes += static_cast<int64_t>(field.length_delimited().size());
    } else if (field.type() == UnknownField::TYPE_GROUP) {
      bytes += UnknownBytes(field.group());
    } else {
      bytes += 8;
    }
  }
  return bytes;
}

// "[\"optimizer.lr\"]" for a map entry with a short printable string key, else "[#3]".
std::string EntryName(const Message& entry, int index) {
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    const std::string text = entry.GetReflection()->GetString(entry, key);
    bool printable = text.size() <= 64;
    for (char c : text) printable = printable && absl::ascii_isprint(c) && c != '"';
    if (printable) return absl::StrCat("[\"", text, "\"]");
  }
  return absl::StrCat("[#", index, "]");
}

absl::Status CheckMessage(const Message& message, const std::string& prefix);

// One value of a field: `index` -1 for a singular field.
absl::Status CheckValue(const Message& message, const FieldDescriptor* field, const Bound& bound, int index,
                        const std::string& path) {
  const Reflection* r = message.GetReflection();
  if (IsText(field)) {
    std::string scratch;
    const std::string& text = index < 0 ? r->GetStringReference(message, field, &scratch)
                                        : r->GetRepeatedStringReference(message, field, index, &scratch);
    if (static_cast<int64_t>(text.size()) > bound.bytes) {
      return Past(path, static_cast<int64_t>(text.size()), "bytes", bound.bytes);
    }
    return absl::OkStatus();
  }
  if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return absl::OkStatus();  // Numbers, enums.
  const Message& child =
      index < 0 ? r->GetMessage(message, field) : r->GetRepeatedMessage(message, field, index);
  return CheckMessage(child, path);
}

absl::Status CheckField(const Message& message, const FieldDescriptor* field, const std::string& prefix) {
  const Bound bound = BoundOf(field);
  const std::string path = Join(prefix, field->name());
  const Reflection* r = message.GetReflection();
  if (field->is_repeated()) {
    const int n = r->FieldSize(message, field);
    if (n > bound.count) return Past(path, n, "entries", bound.count);
    for (int i = 0; i < n; ++i) {
      const std::string element = field->is_map()
                                      ? path + EntryName(r->GetRepeatedMessage(message, field, i), i)
                                      : absl::StrCat(path, "[", i, "]");
      if (absl::Status s = CheckValue(message, field, bound, i, element); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (absl::Status s = CheckValue(message, field, bound, -1, path); !s.ok()) return s;
  // A message's own fields first, so that the error names the field that is too large, not its parent.
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && bound.bytes > 0) {
    const int64_t size = static_cast<int64_t>(r->GetMessage(message, field).ByteSizeLong());
    if (size > bound.bytes) return Past(path, size, "bytes", bound.bytes);
  }
  return absl::OkStatus();
}

absl::Status CheckMessage(const Message& message, const std::string& prefix) {
  const Reflection* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);  // The fields that are set: empty ones cannot be past a bound.
  for (const FieldDescriptor* field : fields) {
    if (absl::Status s = CheckField(message, field, prefix); !s.ok()) return s;
  }
  const int64_t unknown = UnknownBytes(r->GetUnknownFields(message));
  if (unknown > limits::kMaxStringBytes) {
    return Past(Join(prefix, "(unknown fields)"), unknown, "bytes", limits::kMaxStringBytes);
  }
  return absl::OkStatus();
}

// Cuts the fields whose bound says so, in `message` and the messages it holds (not in map entries: no map
// has such a field).
void CutReportFields(Message* message) {
  const Reflection* r = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_map()) {
      if (!field->is_repeated()) {
        CutReportFields(r->MutableMessage(message, field));
        continue;
      }
      for (int i = 0; i < r->FieldSize(*message, field); ++i) {
        CutReportFields(r->MutableRepeatedMessage(message, field, i));
      }
      continue;
    }
    const Bound bound = BoundOf(field);
    if (!IsText(field) || !bound.cut) continue;
    if (!field->is_repeated()) {
      const std::string text = r->GetString(*message, field);
      if (static_cast<int64_t>(text.size()) > bound.bytes) {
        r->SetString(message, field, limits::CutText(text, bound.bytes));
      }
      continue;
    }
    for (int i = 0; i < r->FieldSize(*message, field); ++i) {
      const std::string text = r->GetRepeatedString(*message, field, i);
      if (static_cast<int64_t>(text.size()) > bound.bytes) {
        r->SetRepeatedString(message, field, i, limits::CutText(text, bound.bytes));
      }
    }
  }
}

}  // namespace

absl::Status CheckRequestBounds(const Message& message) { return CheckMessage(message, ""); }

absl::Status CutAndCheckReportBounds(Message* report) {
  CutReportFields(report);
  return CheckMessage(*report, "");
}

std::vector<std::string> FieldsWithOwnBounds() {
  std::vector<std::string> names;
  for (const auto& [name, bound] : Table()) names.push_back(name);
  return names;
}

}  // namespace nmsparse
