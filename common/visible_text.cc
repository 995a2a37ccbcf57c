#include "common/visible_text.h"

#include <cstdio>

#include "common/unicode_text.h"

namespace nmsparse {
namespace {

void AppendVisible(char32_t c, bool keep_newlines, std::string* out) {
  if (!IsDisplayControl(c) || (keep_newlines && c == '\n')) return AppendUtf8(c, out);
  char escape[8];
  std::snprintf(escape, sizeof(escape), c < 0x80 ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(c));
  out->append(escape);
}

}  // namespace

std::string VisibleTextFilter::Filter(std::string_view piece) {
  std::string text = pending_;
  text.append(piece);
  pending_.clear();
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const DecodedChar c = DecodeUtf8(text, at);
    if (c.kind == DecodedChar::Kind::kTruncated) {
      pending_ = text.substr(at);
      break;
    }
    AppendVisible(c.code_point, keep_newlines_, &out);
    at += c.length;
  }
  return out;
}

std::string VisibleTextFilter::Flush() {
  std::string out;
  if (!pending_.empty()) AppendUtf8(kReplacementChar, &out);
  pending_.clear();
  return out;
}

namespace {

std::string Filtered(std::string_view text, bool keep_newlines) {
  VisibleTextFilter filter(keep_newlines);
  std::string out = filter.Filter(text);
  return out + filter.Flush();
}

}  // namespace

std::string VisibleText(std::string_view text) { return Filtered(text, /*keep_newlines=*/false); }

std::string VisibleText(std::string_view text, size_t max_chars) {
  std::string visible = VisibleText(text);
  constexpr char kCut[] = "...";
  size_t chars = 0, at = 0;
  for (; at < visible.size(); at += DecodeUtf8(visible, at).length) {
    if (++chars > max_chars) break;
  }
  if (at >= visible.size()) return visible;
  // Cut where "..." still fits within max_chars (whole characters: `visible` is valid UTF-8).
  size_t keep = 0;
  for (size_t n = 0; n + 3 < max_chars; ++n) keep += DecodeUtf8(visible, keep).length;
  return visible.substr(0, keep) + (max_chars >= 3 ? kCut : "");
}

std::string VisibleLines(std::string_view text) { return Filtered(text, /*keep_newlines=*/true); }

}  // namespace nmsparse
