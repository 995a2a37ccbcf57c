#include "common/unicode_text.h"

namespace nmsparse {

DecodedChar DecodeUtf8(std::string_view text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return {DecodedChar::Kind::kValid, lead, 1};
  // RFC 3629 / Unicode table 3-7: the lead byte fixes the length and the range of the second byte, which
  // excludes overlong forms, surrogates and code points past U+10FFFF.
  size_t length = 0;
  unsigned char second_min = 0x80, second_max = 0xBF;
  char32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code_point = lead & 0x0F;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code_point = lead & 0x07;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return {DecodedChar::Kind::kInvalid, kReplacementChar, 1};
  }
  for (size_t i = 1; i < length; ++i) {
    // A well-formed prefix so far: the rest may come with the next piece of a stream.
    if (at + i >= text.size()) return {DecodedChar::Kind::kTruncated, kReplacementChar, text.size() - at};
    const auto byte = static_cast<unsigned char>(text[at + i]);
    const unsigned char min = i == 1 ? second_min : 0x80, max = i == 1 ? second_max : 0xBF;
    if (byte < min || byte > max) return {DecodedChar::Kind::kInvalid, kReplacementChar, 1};
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  return {DecodedChar::Kind::kValid, code_point, length};
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

size_t FirstInvalidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const DecodedChar c = DecodeUtf8(text, at);
    if (c.kind != DecodedChar::Kind::kValid) return at;
    at += c.length;
  }
  return std::string_view::npos;
}

std::string ValidUtf8(std::string_view text) {
  if (FirstInvalidUtf8(text) == std::string_view::npos) return std::string(text);
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const DecodedChar c = DecodeUtf8(text, at);
    if (c.kind == DecodedChar::Kind::kValid) {
      out.append(text.substr(at, c.length));
      at += c.length;
    } else {
      AppendUtf8(kReplacementChar, &out);
      ++at;
    }
  }
  return out;
}

bool IsDisplayControl(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029 ||
         c == 0xFFFE || c == 0xFFFF;
}

}  // namespace nmsparse
