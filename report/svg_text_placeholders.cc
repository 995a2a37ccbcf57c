#include "report/svg_text_placeholders.h"

#include "absl/strings/str_cat.h"
#include "common/unicode_text.h"
#include "common/visible_text.h"

namespace nmsparse::report {
namespace {

std::string XmlEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

size_t CharCount(const std::string& utf8) {
  size_t count = 0;
  for (size_t at = 0; at < utf8.size(); at += DecodeUtf8(utf8, at).length) ++count;
  return count;
}

}  // namespace

std::string SvgTextPlaceholders::Add(const std::string& text) {
  const std::string visible = VisibleText(text, kMaxFigureTextChars);
  if (visible.empty()) return "";  // gnuplot leaves an empty title out, as it should.
  std::string placeholder = absl::StrCat("Q", escaped_.size(), "Q");
  const size_t chars = CharCount(visible);
  if (placeholder.size() < chars) placeholder.append(chars - placeholder.size(), 'q');
  escaped_[placeholder] = XmlEscaped(visible);
  return placeholder;
}

std::string SvgTextPlaceholders::Substitute(const std::string& svg) const {
  std::string out;
  out.reserve(svg.size());
  size_t at = 0;
  for (size_t open = svg.find('>'); open != std::string::npos; open = svg.find('>', open + 1)) {
    const size_t close = svg.find('<', open + 1);
    if (close == std::string::npos) break;
    auto text = escaped_.find(svg.substr(open + 1, close - open - 1));
    if (text == escaped_.end()) continue;
    out.append(svg, at, open + 1 - at);
    out += text->second;
    at = close;
    open = close - 1;
  }
  out.append(svg, at, std::string::npos);
  return out;
}

}  // namespace nmsparse::report
