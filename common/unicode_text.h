// The Unicode facts behind every rule for showing user text (names, labels, keys, log lines, token names):
// strict UTF-8 decoding, and which code points must never reach a terminal, an XML document or a page as
// they are because they move the cursor, end a line, reorder the text around them or are not allowed in XML.
#ifndef NMSPARSE_COMMON_UNICODE_TEXT_H_
#define NMSPARSE_COMMON_UNICODE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace nmsparse {

struct DecodedChar {
  enum class Kind {
    kValid,      // `code_point` spans `length` bytes.
    kInvalid,    // One byte that starts no well-formed UTF-8 sequence (overlong, surrogate, > U+10FFFF...).
    kTruncated,  // The text ends inside a sequence that could still become well-formed.
  };
  Kind kind;
  char32_t code_point;
  size_t length;
};

// The character at byte `at` of `text` (at < text.size()), by RFC 3629.
DecodedChar DecodeUtf8(std::string_view text, size_t at);

void AppendUtf8(char32_t code_point, std::string* out);

// The offset of the first byte of `text` that is not part of well-formed UTF-8, or npos. Protobuf's proto3
// strings must be UTF-8: a message carrying other bytes fails to parse at the other end.
size_t FirstInvalidUtf8(std::string_view text);

// `text` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD (a trainer's log line).
std::string ValidUtf8(std::string_view text);

// C0 controls, DEL, C1 controls, the bidirectional formatting characters (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069), the line and paragraph separators (U+2028, U+2029), and U+FFFE/U+FFFF
// (not characters in XML 1.0).
bool IsDisplayControl(char32_t code_point);

inline constexpr char32_t kReplacementChar = 0xFFFD;

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_UNICODE_TEXT_H_
