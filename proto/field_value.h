// One value of a protobuf field by reflection, as its C++ type: the switch over FieldDescriptor::CppType that
// every reflective reader and writer needs (YAML <-> proto, spec keys -> proto, proto -> JSON), written once.
#ifndef NMSPARSE_PROTO_FIELD_VALUE_H_
#define NMSPARSE_PROTO_FIELD_VALUE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace nmsparse {

// Calls `visit` with element `index` of repeated field `f` of `m`, or with the singular value when index is
// -1, as int32_t, int64_t, uint32_t, uint64_t, double, float, bool, const std::string&,
// const EnumValueDescriptor* or const Message&. Returns what `visit` returns.
template <typename Visit>
decltype(auto) VisitFieldValue(const google::protobuf::Message& m, const google::protobuf::FieldDescriptor* f,
                               int index, Visit&& visit) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      return visit(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FD::CPPTYPE_INT64:
      return visit(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FD::CPPTYPE_UINT32:
      return visit(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FD::CPPTYPE_UINT64:
      return visit(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FD::CPPTYPE_DOUBLE:
      return visit(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FD::CPPTYPE_FLOAT:
      return visit(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FD::CPPTYPE_BOOL:
      return visit(rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f));
    case FD::CPPTYPE_STRING: {
      std::string scratch;
      return visit(rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                       : r->GetStringReference(m, f, &scratch));
    }
    case FD::CPPTYPE_ENUM:
      return visit(rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f));
    case FD::CPPTYPE_MESSAGE:
      break;
  }
  return visit(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
}

// Sets singular field `f` of `m` to `value`, or appends it to a repeated one. The value's type must be the
// field's C++ type (the overload chosen says which setter runs).
namespace field_value_internal {
#define NMSPARSE_STORE_FIELD_VALUE(Type, Name)                                                              \
  inline void Store(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f, Type value) { \
    const google::protobuf::Reflection* r = m->GetReflection();                                             \
    f->is_repeated() ? r->Add##Name(m, f, value) : r->Set##Name(m, f, value);                               \
  }
NMSPARSE_STORE_FIELD_VALUE(int32_t, Int32)
NMSPARSE_STORE_FIELD_VALUE(int64_t, Int64)
NMSPARSE_STORE_FIELD_VALUE(uint32_t, UInt32)
NMSPARSE_STORE_FIELD_VALUE(uint64_t, UInt64)
NMSPARSE_STORE_FIELD_VALUE(double, Double)
NMSPARSE_STORE_FIELD_VALUE(float, Float)
NMSPARSE_STORE_FIELD_VALUE(bool, Bool)
NMSPARSE_STORE_FIELD_VALUE(std::string, String)
NMSPARSE_STORE_FIELD_VALUE(const google::protobuf::EnumValueDescriptor*, Enum)
#undef NMSPARSE_STORE_FIELD_VALUE
}  // namespace field_value_internal

// Stores `value` converted to T, the field's C++ type.
template <typename T, typename V>
void StoreFieldValue(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f, V&& value) {
  field_value_internal::Store(m, f, static_cast<T>(std::forward<V>(value)));
}

}  // namespace nmsparse

#endif  // NMSPARSE_PROTO_FIELD_VALUE_H_
