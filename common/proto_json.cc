#include "common/proto_json.h"

#include <map>

#include "common/safe_json.h"
#include "google/protobuf/descriptor.h"

namespace nmsparse {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Element `index` of a repeated field, or the singular value with index -1.
Json FieldValue(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return ToJson(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_ENUM:
      return (rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name();
  }
  return nullptr;
}

// A map field as an object sorted by key (protobuf maps have no order); keys as text.
Json MapValue(const Message& m, const FieldDescriptor* f) {
  std::map<std::string, Json> sorted;
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const Message& entry = r->GetRepeatedMessage(m, f, i);
    const Json key = FieldValue(entry, entry.GetDescriptor()->FindFieldByName("key"), -1);
    sorted[key.is_string() ? key.get<std::string>() : key.dump()] =
        FieldValue(entry, entry.GetDescriptor()->FindFieldByName("value"), -1);
  }
  Json out = Json::object();
  for (auto& [key, value] : sorted) out[key] = std::move(value);
  return out;
}

}  // namespace

Json ToJson(const Message& message) {
  Json out = Json::object();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < message.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* f = message.GetDescriptor()->field(i);
    if (f->is_map()) {
      out[f->name()] = MapValue(message, f);
    } else if (f->is_repeated()) {
      Json list = Json::array();
      for (int j = 0; j < r->FieldSize(message, f); ++j) list.push_back(FieldValue(message, f, j));
      out[f->name()] = std::move(list);
    } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || r->HasField(message, f)) {
      out[f->name()] = FieldValue(message, f, -1);
    }
  }
  return out;
}

std::string ToJsonText(const Json& json, bool pretty) {
  // Replace invalid UTF-8 (a log line cut mid-character) rather than throw; escape the display controls
  // that JSON allows raw (DEL, C1, bidi overrides), so that the text is as safe on a terminal as a table.
  return SafeJsonText(json.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace nmsparse
