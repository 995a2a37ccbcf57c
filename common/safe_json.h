// A JSON document made safe for a terminal and for strict parsers without changing what it says: every raw
// display control past ASCII's C0 (DEL, C1 controls, bidi overrides, line separators; common/unicode_text.h)
// becomes a \uXXXX escape, and bytes that are not UTF-8 become \ufffd. Outside its strings a JSON text is
// ASCII, so such characters can only stand inside strings, where the escape means the same character. (Raw
// C0 controls are left alone: inside strings JSON encoders escape them, outside they are whitespace.)
#ifndef NMSPARSE_COMMON_SAFE_JSON_H_
#define NMSPARSE_COMMON_SAFE_JSON_H_

#include <string>
#include <string_view>

namespace nmsparse {

std::string SafeJsonText(std::string_view json);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_SAFE_JSON_H_
