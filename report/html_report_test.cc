#include "report/html_report.h"

#include <gtest/gtest.h>

#include "common/proto_json.h"
#include "report/figures.h"
#include "report/gnuplot_svg.h"

namespace nmsparse::report {
namespace {

// The text of the page's <script id="nm-figures" type="application/json"> element.
std::string FigureData(const std::string& html) {
  const std::string open = "<script id=\"nm-figures\" type=\"application/json\">";
  const size_t start = html.find(open);
  if (start == std::string::npos) return "";
  const size_t from = start + open.size();
  return html.substr(from, html.find("</script>", from) - from);
}

SweepData TwoRuns() {
  SweepData data;
  data.sweep.set_id(3);
  data.sweep.set_name("demo <sweep>");
  v1::GridAxis* axis = data.sweep.mutable_spec()->add_grid();
  axis->set_name("recipe");
  axis->add_values()->set_label("dense");
  axis->add_values()->set_label("srste");
  for (int i = 0; i < 2; ++i) {
    RunData r;
    r.run.set_id(10 + i);
    r.run.set_state(v1::SUCCEEDED);
    (*r.run.mutable_labels())["recipe"] = i == 0 ? "dense" : "srste";
    r.run.set_resolved_spec(i == 0 ? "model: {name: vit_micro_patch4_28}\n"
                                   : "model: {name: vit_micro_patch4_28}\n"
                                     "sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}\n");
    (*r.run.mutable_final_metrics())["top1"] = 0.6 + 0.1 * i;
    (*r.run.mutable_final_metrics())["flops"] = 1e9 * (1 + i);
    (*r.run.mutable_final_metrics())["params"] = 2e5 + 1e5 * i;
    for (int e = 0; e < 2; ++e) {
      v1::MetricPoint p;
      p.set_kind("epoch");
      p.set_epoch(e);
      p.set_step(5 * (e + 1));
      (*p.mutable_values())["top1"] = 0.3 + 0.2 * e;
      (*p.mutable_values())["loss"] = 1.5 - 0.5 * e;
      r.curve.push_back(p);
    }
    data.runs.push_back(r);
  }
  return data;
}

TEST(HtmlReportTest, PageReferencesEveryFigureAndEscapes) {
  const SweepData data = TwoRuns();
  absl::StatusOr<ReportFiles> report = BuildReport(data, "top1");
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string& html = report->files.at("index.html");
  EXPECT_NE(html.find("demo &lt;sweep&gt;"), std::string::npos);
  for (const Figure& f : SweepFigures(data, "top1")) {
    EXPECT_NE(html.find("src=\"" + f.id + ".svg\""), std::string::npos) << f.id;
    const std::string& svg = report->files.at(f.id + ".svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos) << f.id;
    for (const Series& s : f.series) EXPECT_NE(svg.find("<title>" + s.name + "</title>"), std::string::npos);
  }
  EXPECT_NE(report->files.at("top1_vs_train_flops.svg").find("<title>Pareto front</title>"),
            std::string::npos);
  // Accuracy against model size, one series per recipe, with its axis titles.
  const std::string& params = report->files.at("top1_vs_params.svg");
  for (const char* text : {"<title>DENSE</title>", "<title>SRSTE</title>", ">parameters<", ">final top1<"}) {
    EXPECT_NE(params.find(text), std::string::npos) << text << "\n" << params;
  }
  // The compare table, as nmctl compare prints it: one row per recipe, top-1 in percent.
  EXPECT_NE(html.find("<h2 id=\"table\">top1 (%) by recipe</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>dense</td><td>60.0</td>"), std::string::npos) << html;
  // The interactive figures: a chart per figure, drawn by figures.js with plotly.js from the inline JSON.
  for (const Figure& f : SweepFigures(data, "top1")) {
    EXPECT_NE(html.find("id=\"chart-" + f.id + "\""), std::string::npos) << f.id;
  }
  EXPECT_NE(html.find("<script src=\"plotly.js\"></script>"), std::string::npos);
  EXPECT_NE(report->files.at("plotly.js").find("plotly.js v2"), std::string::npos);
  EXPECT_NE(report->files.at("figures.js").find("NmFigures"), std::string::npos);
  const Json doc = Json::parse(FigureData(html));
  EXPECT_EQ(doc["runs"]["11"]["name"], "run 11 recipe=srste");
  EXPECT_EQ(doc["figures"].size(), SweepFigures(data, "top1").size());
}

TEST(HtmlReportTest, PdfFiguresAndAMissingPlotly) {
  const SweepData data = TwoRuns();
  ReportOptions options;
  options.pdf = true;
  absl::StatusOr<ReportFiles> report = BuildReport(data, "top1", options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->files.at("curves_loss.pdf").rfind("%PDF", 0), 0u);
  EXPECT_NE(report->files.at("index.html").find("href=\"curves_loss.pdf\""), std::string::npos);
  options.plotly_js_path = "/nonexistent/plotly.js";
  report = BuildReport(data, "top1", options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("/nonexistent/plotly.js"), std::string::npos) << report.status();
}

// Runs with model.ema: their ema_top1 in a column beside top1; none without.
TEST(HtmlReportTest, EmaMetricColumnWhenRunsReportIt) {
  SweepData data = TwoRuns();
  EXPECT_EQ(ReportHtml(data, "top1").find("<th>ema_top1</th>"), std::string::npos);
  (*data.runs[0].run.mutable_final_metrics())["ema_top1"] = 0.625;
  const std::string html = ReportHtml(data, "top1");
  EXPECT_NE(html.find("<th>top1</th><th>ema_top1</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>0.6</td><td>0.625</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>0.7</td><td>-</td>"), std::string::npos) << html;
}

// N:M runs: their deploy_top1 in a column beside top1, and the legend saying which top-1 is which.
TEST(HtmlReportTest, DeployableTop1ColumnAndLegendWhenRunsReportIt) {
  SweepData data = TwoRuns();
  EXPECT_EQ(ReportHtml(data, "top1").find("deploy_top1"), std::string::npos);
  (*data.runs[0].run.mutable_final_metrics())["deploy_top1"] = 0.125;
  (*data.runs[0].run.mutable_final_metrics())["ema_top1"] = 0.625;
  const std::string html = ReportHtml(data, "top1");
  EXPECT_NE(html.find("<th>top1</th><th>ema_top1</th><th>deploy_top1</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>0.6</td><td>0.625</td><td>0.125</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<p>deploy_top1: the deployable model"), std::string::npos) << html;
}

// Issue 22: names and labels are data. A right-to-left override cannot reverse the title, markup stays text,
// and no character XML forbids reaches a figure.
TEST(HtmlReportTest, HostileNamesAreVisibleAndEscaped) {
  SweepData data = TwoRuns();
  const std::string hostile = "evil\u202e <script>alert(1)</script> \x1b[2J\n\xff";
  data.sweep.set_name(hostile);
  data.sweep.mutable_spec()->mutable_grid(0)->mutable_values(0)->set_label(hostile);
  (*data.runs[0].run.mutable_labels())["recipe"] = hostile;
  absl::StatusOr<ReportFiles> report = BuildReport(data, "top1");
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string& html = report->files.at("index.html");
  EXPECT_NE(html.find("<title>nmsparse sweep 3 evil\\u202e &lt;script&gt;alert(1)&lt;&#x2F;script&gt; "
                      "\\x1b[2J\\x0a\uFFFD</title>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  // The figures' JSON closes its <script> only at its end, and reads back as the visible names.
  const std::string json = FigureData(html);
  EXPECT_EQ(json.find('<'), std::string::npos) << json;
  EXPECT_EQ(Json::parse(json)["runs"]["10"]["name"],
            "run 10 recipe=evil\\u202e <script>alert(1)</script> \\x1b[2J\\x0a\uFFFD");
  for (const auto& [name, text] : report->files) {
    if (name == "plotly.js") continue;  // Debian's file, not ours.
    EXPECT_EQ(text.find("\u202e"), std::string::npos) << name;
    for (unsigned char c : text) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t') << name << " " << int{c};
  }
  EXPECT_NE(report->files.at("curves_loss.svg").find("evil\\u202e &lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse::report
