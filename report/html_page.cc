#include "report/html_page.h"

#include "common/visible_text.h"

namespace nmsparse::report {
namespace {

mstch::node Visible(const mstch::node& node) {
  if (const auto* text = boost::get<std::string>(&node)) return VisibleText(*text, kMaxPageTextChars);
  if (const auto* map = boost::get<mstch::map>(&node)) {
    mstch::map out;
    for (const auto& [key, value] : *map) out.emplace(key, Visible(value));
    return out;
  }
  if (const auto* array = boost::get<mstch::array>(&node)) {
    mstch::array out;
    for (const mstch::node& value : *array) out.push_back(Visible(value));
    return out;
  }
  return node;  // Numbers, booleans, lambdas and objects: nmsparse's pages pass none from users.
}

}  // namespace

std::string RenderHtml(const std::string& page_template, const mstch::map& context) {
  if (page_template.find("{{{") != std::string::npos || page_template.find("{{&") != std::string::npos) {
    return "<!DOCTYPE html>\n<p>internal error: a page template shows a field unescaped</p>\n";
  }
  return mstch::render(page_template, boost::get<mstch::map>(Visible(context)));
}

}  // namespace nmsparse::report
