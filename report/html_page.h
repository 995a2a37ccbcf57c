// The one way nmsparse renders a page (the report and the dashboard): a mustache template (mstch) whose every
// {{field}} is user text made visible (common/visible_text.h: one line, no display controls, so that a
// right-to-left override cannot reverse a title, cut to kMaxPageTextChars) and then HTML-escaped by mstch.
// Templates never use the unescaped forms {{{field}}} or {{&field}}: a template with one renders an error.
#ifndef NMSPARSE_REPORT_HTML_PAGE_H_
#define NMSPARSE_REPORT_HTML_PAGE_H_

#include <mstch/mstch.hpp>
#include <string>

namespace nmsparse::report {

inline constexpr size_t kMaxPageTextChars = 1024;

std::string RenderHtml(const std::string& page_template, const mstch::map& context);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_HTML_PAGE_H_
