#include "common/safe_json.h"

#include <cstdio>

#include "common/unicode_text.h"

namespace nmsparse {

std::string SafeJsonText(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t at = 0; at < json.size();) {
    const DecodedChar c = DecodeUtf8(json, at);
    const size_t length = c.kind == DecodedChar::Kind::kValid ? c.length : 1;
    if (c.kind == DecodedChar::Kind::kValid && (c.code_point < 0x7F || !IsDisplayControl(c.code_point))) {
      out.append(json.substr(at, length));
    } else {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(c.code_point));
      out.append(escape);
    }
    at += length;
  }
  return out;
}

}  // namespace nmsparse
