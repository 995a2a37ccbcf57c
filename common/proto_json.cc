#include "common/proto_json.h"

#include <map>
#include <type_traits>

#include "common/safe_json.h"
#include "google/protobuf/descriptor.h"
#include "proto/field_value.h"

namespace nmsparse {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Element `index` of a repeated field, or the singular value with index -1.
Json FieldValue(const Message& m, const FieldDescriptor* f, int index) {
  return VisitFieldValue(m, f, index, [](const auto& value) -> Json {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, Message>) {
      return ToJson(value);
    } else if constexpr (std::is_same_v<T, const google::protobuf::EnumValueDescriptor*>) {
      return value->name();
    } else {
      return value;
    }
  });
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
