// Issue 22: the dashboard's pages show names, labels and messages as text: escaped markup, display controls
// made visible (a right-to-left override cannot reverse a title), nothing past kMaxPageTextChars.
#include "server/dashboard/pages.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/html_page.h"
#include "server/dashboard/run_rows.h"

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
  v1::Run run;
  run.set_id(9);
  run.set_state(v1::RUNNING);
  (*run.mutable_labels())[kHostile] = kHostile;
  const Json page = RunsPage({RowOf(run)}, RunsQuery());
  ExpectSafe(SweepPage({{"sweep", {{"id", 7}, {"name", kHostile}}}, {"version", kHostile}}, page));
}

// One formatter for the first render and the polls: the row's text is the server's, nmctl's number format
// (a final flops of 1e12 showed as "flops=10000000" until the first poll, then as "1e+12"); each final metric
// is a column (issue 40: they were one text blob), its header a link that sorts by it.
TEST(PagesTest, SweepPageShowsTheRowsAsThePollDoes) {
  v1::Run run;
  run.set_id(4);
  run.set_state(v1::SUCCEEDED);
  (*run.mutable_final_metrics())["flops"] = 1e12;
  (*run.mutable_final_metrics())["top1"] = 0.81234;
  (*run.mutable_labels())["recipe"] = "srste";
  (*run.mutable_labels())["optimizer.lr"] = "0.0002487869161216888";
  run.add_label_axes("recipe");
  run.add_label_axes("optimizer.lr");
  const RunRow row = RowOf(run);
  EXPECT_EQ(row.labels, "recipe=srste optimizer.lr=0.0002488");  // As nmctl shows them (issue 40).
  EXPECT_EQ(row.final_texts, (std::map<std::string, std::string>{{"flops", "1T"}, {"top1", "0.8123"}}));
  v1::Run other;
  other.set_id(5);
  (*other.mutable_final_metrics())["a/b&c"] = 2;
  RunsQuery query;
  query.sort = "top1";
  const Json page = RunsPage({row, RowOf(other)}, query);
  EXPECT_EQ(page["metrics"], Json({"a/b&c", "flops", "top1"}));
  EXPECT_EQ(page["runs"][0]["final_texts"]["flops"], "1T");
  EXPECT_EQ(page["runs"][0]["finals"]["flops"], 1e12);
  const std::string html = SweepPage({{"sweep", {{"id", 7}}}, {"version", "v1"}, {"ended", true}}, page);
  EXPECT_NE(
      html.find("<td>0</td><td class=\"num\">-</td><td class=\"num\">1T</td><td class=\"num\">0.8123</td>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("<a href=\"?sort=a%2fb%26c\" data-sort=\"a&#x2F;b&amp;c\">a&#x2F;b&amp;c</a>"),
            std::string::npos)
      << html;
  // The sorted column is marked, and its link sorts the other way.
  EXPECT_NE(
      html.find(
          "aria-sort=\"ascending\"><a href=\"?sort=top1&amp;desc=1\" data-sort=\"top1\">top1 \u25b2</a>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("data-ended=\"true\""), std::string::npos);
  EXPECT_NE(html.find("2 of 2"), std::string::npos);
}

// A final metric sorts as a number; a run without it or with NaN (which has no order) goes last, ascending or
// descending.
TEST(PagesTest, FinalMetricSortPutsMissingAndNanLast) {
  std::vector<RunRow> rows;
  for (const auto& [id, top1] :
       std::vector<std::pair<int, double>>{{1, 10.5}, {2, NAN}, {3, 9.25}, {4, -1}}) {
    v1::Run run;
    run.set_id(id);
    if (id != 4) (*run.mutable_final_metrics())["top1"] = top1;
    rows.push_back(RowOf(run));
  }
  auto ids = [&](bool desc) {
    RunsQuery query;
    query.sort = "top1";
    query.desc = desc;
    std::vector<int64_t> out;
    const Json page = RunsPage(rows, query);
    for (const Json& r : page["runs"]) out.push_back(r["id"].get<int64_t>());
    return out;
  };
  EXPECT_EQ(ids(false), (std::vector<int64_t>{3, 1, 2, 4}));
  EXPECT_EQ(ids(true), (std::vector<int64_t>{1, 3, 2, 4}));
  EXPECT_EQ(rows[1].final_texts.at("top1"), "nan");
}

// The sweep page draws its figures with figures.js and plotly.js, from the sweep's figure document that it
// reads after loading (GET /api/sweeps/S/figures): the table does not wait for the figures to be built.
TEST(PagesTest, SweepPageLoadsItsFiguresAfterwards) {
  const std::string html = SweepPage({{"sweep", {{"id", 7}}}, {"version", "v1"}}, RunsPage({}, RunsQuery()));
  EXPECT_NE(html.find("fetch('/api/sweeps/7/figures'"), std::string::npos) << html;
  EXPECT_NE(html.find("<div class=\"figures\" id=\"figures\"></div>"), std::string::npos) << html;
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
