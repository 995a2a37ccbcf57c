// Issue 22: the dashboard's pages show names, labels and messages as text: escaped markup, display controls
// made visible (a right-to-left override cannot reverse a title), nothing past kMaxPageTextChars.
#include "server/dashboard/pages.h"

#include <gtest/gtest.h>

#include "report/html_page.h"

namespace nmsparse::server {
namespace {

const std::string kHostile = "a\u202e</td><script>alert(1)</script>\x1b[2J\n\xff";

void ExpectSafe(const std::string& html) {
  EXPECT_EQ(html.find("\u202e"), std::string::npos) << html;
  EXPECT_EQ(html.find("<script>alert"), std::string::npos) << html;
  EXPECT_NE(html.find("a\\u202e&lt;&#x2F;td&gt;&lt;script&gt;alert(1)"), std::string::npos) << html;
  for (unsigned char c : html) EXPECT_TRUE(c >= 0x20 || c == '\n') << int{c};
}

TEST(PagesTest, SweepsAndSweepPages) {
  const Json sweeps = {{"sweeps",
                        {{{"id", 7},
                          {"name", kHostile},
                          {"submitted_by", kHostile},
                          {"run_counts", {{kHostile, 1}}},
                          {"created_at_ms", 5}}}}};
  ExpectSafe(SweepsPage(sweeps));
  const Json sweep = {{"sweep", {{"id", 7}, {"name", kHostile}}},
                      {"runs",
                       {{{"id", 9},
                         {"labels", {{kHostile, kHostile}}},
                         {"state", "RUNNING"},
                         {"attempt", 1},
                         {"final_metrics", Json::object()}}}}};
  ExpectSafe(SweepPage(sweep, {}, {}));
}

// The figures' JSON in the sweep page cannot close its <script>: the hostile run name is in it, escaped.
TEST(PagesTest, SweepPageFiguresAreData) {
  report::SweepData data;
  data.runs.resize(1);
  data.runs[0].run.set_id(9);
  (*data.runs[0].run.mutable_labels())["k"] = "</script><img src=x onerror=alert(1)>";
  const Json sweep = {{"sweep", {{"id", 7}, {"name", "s"}}}, {"runs", Json::array()}};
  report::Figure f;
  f.id = "curves_loss";
  const std::string html = SweepPage(sweep, {f}, data);
  EXPECT_NE(html.find("id=\"chart-curves_loss\""), std::string::npos) << html;
  EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cimg"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_NE(html.find("<script src=\"/static/plotly.js?v="), std::string::npos) << html;
  EXPECT_NE(html.find("<script src=\"/static/figures.js?v="), std::string::npos) << html;
}

TEST(PagesTest, RunAndLoginPages) {
  ExpectSafe(
      RunPage({{"run", {{"id", 9}, {"sweep_id", 7}, {"state", "RUNNING"}, {"labels", {{"k", kHostile}}}}}}));
  ExpectSafe(LoginPage(kHostile));
}

TEST(PagesTest, LongTextIsCut) {
  const std::string page = LoginPage(std::string(1 << 20, 'x'));
  EXPECT_LT(page.size(), 8000u);
}

TEST(HtmlPageTest, UnescapedFieldsAreRefused) {
  EXPECT_NE(report::RenderHtml("<p>{{{x}}}</p>", {{"x", std::string("<b>")}}).find("internal error"),
            std::string::npos);
  EXPECT_NE(report::RenderHtml("<p>{{&x}}</p>", {{"x", std::string("<b>")}}).find("internal error"),
            std::string::npos);
  EXPECT_EQ(report::RenderHtml("<p>{{x}}</p>", {{"x", std::string("<b>")}}), "<p>&lt;b&gt;</p>");
}

}  // namespace
}  // namespace nmsparse::server
