#include "report/html_report.h"

#include <gtest/gtest.h>

#include "report/figures.h"
#include "report/gnuplot_svg.h"

namespace nmsparse::report {
namespace {

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
    r.run.mutable_spec()->mutable_model()->set_name("vit_micro_patch4_28");
    if (i == 1) {
      r.run.mutable_spec()->mutable_sparsity()->set_sparsity_type(v1::SparsitySpec::SRSTE);
      r.run.mutable_spec()->mutable_sparsity()->set_n_sparsity(2);
      r.run.mutable_spec()->mutable_sparsity()->set_m_sparsity(4);
    }
    (*r.run.mutable_final_metrics())["top1"] = 0.6 + 0.1 * i;
    (*r.run.mutable_final_metrics())["flops"] = 1e9;
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
  // The compare table: one row per recipe.
  EXPECT_NE(html.find("<td>dense</td><td>0.6"), std::string::npos) << html;
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
  for (const auto& [name, text] : report->files) {
    EXPECT_EQ(text.find("\u202e"), std::string::npos) << name;
    for (unsigned char c : text) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t') << name << " " << int{c};
  }
  EXPECT_NE(report->files.at("curves_loss.svg").find("evil\\u202e &lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse::report
