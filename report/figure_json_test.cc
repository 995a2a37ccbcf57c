#include "report/figure_json.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "report/web_assets.h"

namespace nmsparse::report {
namespace {

constexpr char kHostile[] = "</script><img src=x onerror=alert(1)> &amp; <!-- \u2028";

Figure HostileFigure() {
  Figure f;
  f.id = "curves_loss";
  f.title = kHostile;
  f.x_label = "epoch";
  f.y_label = "loss";
  f.series.push_back(Series{kHostile, Series::Style::kLines, {1, 2, 3}, {0.5, NAN, 0.25}, {}, {7, 7, 7}});
  f.series.push_back(
      Series{"front", Series::Style::kFront, {1}, {std::numeric_limits<double>::infinity()}, {}});
  return f;
}

TEST(FigureJsonTest, ScriptTextCannotCloseItsElement) {
  const std::string text = ScriptSafeJsonText(FigureJson(HostileFigure()));
  for (const char c : {'<', '>', '&'}) EXPECT_EQ(text.find(c), std::string::npos) << c << " in " << text;
  EXPECT_EQ(text.find("\u2028"), std::string::npos);
  EXPECT_NE(text.find("\\u003c/script\\u003e"), std::string::npos) << text;
  // The escapes mean the same characters: the text reads back as the figure's (visible) title.
  const Json back = Json::parse(text);
  EXPECT_EQ(back["series"][0]["name"], "</script><img src=x onerror=alert(1)> &amp; <!-- \\u2028");
  EXPECT_EQ(back["title"], back["series"][0]["name"]);
}

TEST(FigureJsonTest, NonFiniteValuesAreNull) {
  const Json j = FigureJson(HostileFigure());
  EXPECT_EQ(j["series"][0]["y"].dump(), "[0.5,null,0.25]");
  EXPECT_EQ(j["series"][1]["y"].dump(), "[null]");
  EXPECT_EQ(j["series"][0]["run_ids"].dump(), "[7,7,7]");
  EXPECT_EQ(j["series"][0]["style"], "lines");
  EXPECT_EQ(j["series"][1]["style"], "front");
  EXPECT_EQ(j["kind"], "xy");
}

TEST(FigureJsonTest, BarsAndParallelCoordinates) {
  Figure bars;
  bars.id = "importance";
  Series s{"importance", Series::Style::kBars, {0, 1}, {0.7, 0.3}, {}};
  s.categories = {"lr", "<b>wd</b>"};
  bars.series.push_back(s);
  const Json b = FigureJson(bars);
  EXPECT_EQ(b["series"][0]["style"], "bars");
  EXPECT_EQ(b["series"][0]["categories"][1], "<b>wd</b>");

  Figure pc;
  pc.id = "parallel";
  pc.kind = Figure::Kind::kParallelCoordinates;
  pc.dimensions.push_back(Dimension{"lr", true, {1e-3, NAN}, {}});
  pc.dimensions.push_back(Dimension{"optimizer", false, {0, 1}, {"adamw", "sgd"}});
  pc.run_ids = {4, 5};
  const Json p = FigureJson(pc);
  EXPECT_EQ(p["kind"], "parallel");
  EXPECT_EQ(p["run_ids"].dump(), "[4,5]");
  EXPECT_EQ(p["dimensions"][0]["log"], true);
  EXPECT_EQ(p["dimensions"][0]["values"].dump(), "[0.001,null]");
  EXPECT_EQ(p["dimensions"][1]["categories"].dump(), R"(["adamw","sgd"])");
}

// The runs the figures show, each with its name (as visible text) and state; runs no figure shows are left
// out (a large sweep's figures show a chosen set: run_marks_cap.h).
TEST(FigureJsonTest, RunsCarryNameAndState) {
  SweepData data;
  data.runs.resize(2);
  data.runs[0].run.set_id(9);
  data.runs[0].run.set_state(v1::STOPPED_EARLY);
  (*data.runs[0].run.mutable_labels())["lr"] = "\x1b[2J";
  data.runs[1].run.set_id(10);
  Figure figure = HostileFigure();
  figure.series[0].run_ids = {9, 9, 9};
  const Json doc = FiguresDocument({figure}, data);
  EXPECT_EQ(doc["runs"]["9"]["state"], "STOPPED_EARLY");
  EXPECT_EQ(doc["runs"]["9"]["name"].get<std::string>().find('\x1b'), std::string::npos);
  EXPECT_FALSE(doc["runs"].contains("10"));
  EXPECT_EQ(doc["figures"].size(), 1u);
}

TEST(WebAssetsTest, ScriptsAndAMissingPlotlyNamesItsPath) {
  EXPECT_NE(FiguresJs().find("NmFigures"), std::string::npos);
  const std::string tags = FigureScripts("{}", "/static/");
  EXPECT_NE(tags.find("<script src=\"/static/plotly.js\"></script>"), std::string::npos);
  const absl::StatusOr<std::string> missing = ReadPlotlyJs("/nonexistent/plotly.js");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/plotly.js"), std::string::npos);
  EXPECT_NE(missing.status().message().find("python3-plotly"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse::report
