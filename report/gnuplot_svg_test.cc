// Issue 22, defect 1: no byte of a figure's text reaches gnuplot's command language. A legend entry that
// gnuplot would run as a shell command (a backquote inside a double-quoted title) is drawn as text, and no
// command runs.
#include "report/gnuplot_svg.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace nmsparse::report {
namespace {

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

Figure HostileFigure(const std::string& canary) {
  const std::vector<std::string> names = {
      "\"`id > " + canary + "`\"",  // The reproduction of the issue.
      "`touch " + canary + "`",     // Backquotes alone.
      "$(touch " + canary + ")",    // The shell's own substitution.
      "@GPVAL_TERM print 'macro'",  // A gnuplot macro.
      "' ; system('touch " + canary + "') ; '",
      "\" ; system(\"touch " + canary + "\") ; \"",
      "back\\slash \\\" <b>&amp;</b>",
      "esc \x1b[2J\x01 nl\nrlo \u202e c1 \u0085 bad \xff end",
  };
  Figure f{"hostile",
           "title `touch " + canary + "`",
           "",
           "x $(touch " + canary + ")",
           "y '`touch " + canary + "`'",
           false,
           {}};
  for (size_t i = 0; i < names.size(); ++i) {
    f.series.push_back(Series{names[i], Series::Style::kLines, {0, 1}, {1.0 + i, 0.5}, {}});
  }
  return f;
}

TEST(GnuplotSvgTest, FigureTextNeverEntersTheScript) {
  const Figure f = HostileFigure("/nonexistent/canary");
  const std::string script = BuildGnuplotScript(f).text;
  for (const char* fragment : {"`", "$(", "touch", "system", "@GPVAL", "canary", "\\slash", "\x1b"}) {
    EXPECT_EQ(script.find(fragment), std::string::npos) << fragment << " in\n" << script;
  }
}

TEST(GnuplotSvgTest, HostileLegendRunsNothingAndShowsEscapedText) {
  const std::string canary = TestDir() + "/CANARY";
  absl::StatusOr<std::string> svg = RenderSvg(HostileFigure(canary));
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_FALSE(Exists(canary)) << "gnuplot ran a command from a legend entry";
  EXPECT_NE(svg->find("<title>&quot;`id &gt; " + canary + "`&quot;</title>"), std::string::npos) << *svg;
  EXPECT_NE(svg->find("$(touch " + canary + ")"), std::string::npos);
  EXPECT_NE(svg->find("back\\slash \\&quot; &lt;b&gt;&amp;amp;&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(svg->find("esc \\x1b[2J\\x01 nl\\x0arlo \\u202e c1 \\u0085 bad \uFFFD end"), std::string::npos);
  EXPECT_NE(svg->find("title `touch " + canary + "`"), std::string::npos);
  // No placeholder is left, and no character XML 1.0 forbids (or that steers a display) is in the SVG.
  EXPECT_EQ(svg->find(">Q0Q"), std::string::npos);
  for (unsigned char c : *svg) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t' || c == '\r') << int{c};
  EXPECT_EQ(svg->find("\u202e"), std::string::npos);
}

// The same hostile names as the importance bars' labels and as parallel coordinates' axes and categories.
std::vector<std::string> HostileNames(const Figure& f) {
  std::vector<std::string> names;
  for (const Series& s : f.series) names.push_back(s.name);
  return names;
}

Figure HostileBars(const std::string& canary) {
  const std::vector<std::string> names = HostileNames(HostileFigure(canary));
  Series bars{"importance", Series::Style::kBars, {}, {}, {}};
  for (size_t i = 0; i < names.size(); ++i) {
    bars.x.push_back(static_cast<double>(i));
    bars.y.push_back(1.0 / (1.0 + i));
    bars.categories.push_back(names[i]);
  }
  Figure f{"bars", "bars `touch " + canary + "`", "", "parameter", "importance", false, {bars}};
  return f;
}

Figure HostileParallel(const std::string& canary) {
  const std::vector<std::string> names = HostileNames(HostileFigure(canary));
  Figure f{"parallel", "parallel $(touch " + canary + ")", "", "", "", false, {}};
  f.kind = Figure::Kind::kParallelCoordinates;
  f.dimensions.push_back({names[0], true, {1e-4, 1e-2, 0.1}, {}});
  f.dimensions.push_back({names[1], false, {0, 1, 2}, {names[2], names[3], names[4]}});
  f.dimensions.push_back({names[5], false, {0.5, NAN, 0.9}, {}});
  f.dimensions.push_back({names[6], false, {0.1, 0.2, 0.3}, {}});
  f.run_ids = {1, 2, 3};
  return f;
}

TEST(GnuplotSvgTest, HostileBarLabelsAndParallelAxesNeverEnterTheScript) {
  for (const Figure& f : {HostileBars("/nonexistent/canary"), HostileParallel("/nonexistent/canary")}) {
    const std::string script = BuildGnuplotScript(f).text;
    for (const char* fragment : {"`", "$(", "touch", "system", "@GPVAL", "canary", "\\slash", "\x1b"}) {
      EXPECT_EQ(script.find(fragment), std::string::npos) << fragment << " in\n" << script;
    }
  }
}

TEST(GnuplotSvgTest, HostileBarsAndParallelCoordinatesRunNothingAndShowEscapedText) {
  const std::string canary = TestDir() + "/CANARY";
  for (const Figure& f : {HostileBars(canary), HostileParallel(canary)}) {
    absl::StatusOr<std::string> svg = RenderSvg(f);
    ASSERT_TRUE(svg.ok()) << f.id << ": " << svg.status();
    EXPECT_FALSE(Exists(canary)) << "gnuplot ran a command from " << f.id;
    EXPECT_NE(svg->find("&quot;`id &gt; " + canary + "`&quot;"), std::string::npos) << *svg;
    EXPECT_NE(svg->find("`touch " + canary + "`"), std::string::npos) << f.id;
    EXPECT_EQ(svg->find(">Q0Q"), std::string::npos) << f.id;
    for (unsigned char c : *svg) EXPECT_TRUE(c >= 0x20 || c == '\n' || c == '\t' || c == '\r') << int{c};
  }
  absl::StatusOr<std::string> bars = RenderSvg(HostileBars(canary));
  ASSERT_TRUE(bars.ok());
  EXPECT_NE(bars->find("back\\slash \\&quot; &lt;b&gt;&amp;amp;&lt;/b&gt;"), std::string::npos);
  absl::StatusOr<std::string> parallel = RenderSvg(HostileParallel(canary));
  ASSERT_TRUE(parallel.ok());
  EXPECT_NE(parallel->find("@GPVAL_TERM print &apos;macro&apos;"), std::string::npos) << *parallel;
  EXPECT_NE(parallel->find(">1e-4<"), std::string::npos);  // The log axis' decades.
}

TEST(GnuplotSvgTest, EmptyFigureSaysSo) {
  Figure f{"x", "a \"quoted\" title", "", "x", "y", false, {}};
  absl::StatusOr<std::string> svg = RenderSvg(f);  // No series: an empty frame saying so.
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_NE(svg->find("no data yet"), std::string::npos);
  EXPECT_NE(svg->find("a &quot;quoted&quot; title"), std::string::npos);
}

// Issue 27's rough edges of the static figures.
// The x tic labels of an SVG (gnuplot writes each tic's text as its own <text><tspan>).
std::vector<std::string> TextsOf(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<tspan"); at != std::string::npos; at = svg.find("<tspan", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    std::string text = svg.substr(start, svg.find('<', start) - start);
    text.erase(0, text.find_first_not_of(' '));
    out.push_back(text);
  }
  return out;
}

bool Has(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

TEST(GnuplotSvgTest, OneEpochCurvesAreMarkersOnAWholeEpochAxis) {
  Figure f{"curves_top1", "t", "", "epoch", "top1", false, {}};
  f.series.push_back(Series{"run 1", Series::Style::kLines, {1}, {0.5}, {}});
  const std::string script = BuildGnuplotScript(f).text;
  EXPECT_NE(script.find("$d0 using 1:2 with points"), std::string::npos) << script;
  EXPECT_NE(script.find("set xrange [0:2]"), std::string::npos) << script;
  absl::StatusOr<std::string> svg = RenderSvg(f);
  ASSERT_TRUE(svg.ok()) << svg.status();
  const std::vector<std::string> texts = TextsOf(*svg);
  EXPECT_TRUE(Has(texts, "1") && Has(texts, "2")) << *svg;
  EXPECT_FALSE(Has(texts, "1.2") || Has(texts, "-0.2") || Has(texts, "0.2")) << *svg;
}

TEST(GnuplotSvgTest, EpochAxisHasWholeTics) {
  Figure f{"curves_top1", "t", "", "epoch", "top1", false, {}};
  f.series.push_back(Series{"run 1", Series::Style::kLines, {1, 2}, {0.5, 0.6}, {}});
  absl::StatusOr<std::string> svg = RenderSvg(f);
  ASSERT_TRUE(svg.ok()) << svg.status();
  const std::vector<std::string> texts = TextsOf(*svg);
  EXPECT_TRUE(Has(texts, "1") && Has(texts, "2")) << *svg;
  EXPECT_FALSE(Has(texts, "1.2") || Has(texts, "1.5")) << *svg;
}

TEST(GnuplotSvgTest, LogAxisHasOneSiLabelPerDecade) {
  Figure f{"top1_vs_train_flops", "t", "", "training FLOPs", "top1", true, {}};
  f.series.push_back(Series{"DENSE", Series::Style::kPoints, {2e9, 3e11}, {0.5, 0.6}, {}});
  absl::StatusOr<std::string> svg = RenderSvg(f);
  ASSERT_TRUE(svg.ok()) << svg.status();
  const std::vector<std::string> texts = TextsOf(*svg);
  EXPECT_TRUE(Has(texts, "1G") && Has(texts, "10G") && Has(texts, "100G") && Has(texts, "1T")) << *svg;
  for (const std::string& t : texts) EXPECT_EQ(t.find("e+"), std::string::npos) << t;
}

// A front of one run has no step to draw: its member is still marked.
TEST(GnuplotSvgTest, ParetoFrontOfOneRunIsDrawn) {
  Figure f{"top1_vs_train_flops", "t", "", "training FLOPs", "top1", true, {}};
  f.series.push_back(Series{"DENSE", Series::Style::kPoints, {2e9, 3e9}, {0.5, 0.4}, {}});
  f.series.push_back(Series{"Pareto front", Series::Style::kFront, {2e9}, {0.5}, {}});
  absl::StatusOr<std::string> svg = RenderSvg(f);
  ASSERT_TRUE(svg.ok()) << svg.status();
  const size_t front = svg->find("<title>Pareto front</title>");
  ASSERT_NE(front, std::string::npos) << *svg;
  // The group after the front's (its ring of points) draws a point.
  const size_t next = svg->find("<g id=\"gnuplot_plot_", front);
  ASSERT_NE(next, std::string::npos) << *svg;
  EXPECT_NE(svg->find("<use xlink:href='#gpPt", next), std::string::npos) << *svg;
}

TEST(SvgTextPlaceholdersTest, PlaceholdersAreAsLongAsTheirText) {
  SvgTextPlaceholders texts;
  EXPECT_EQ(texts.Add("a"), "Q0Q");  // Shorter texts get the shortest placeholder.
  EXPECT_EQ(texts.Add("run 12 recipe=dense"), "Q1Qqqqqqqqqqqqqqqqq");
  EXPECT_EQ(texts.Add(""), "");
  EXPECT_EQ(texts.Add(std::string(1000, 'x')).size(), kMaxFigureTextChars);
  EXPECT_EQ(texts.Substitute("<t>Q0Q</t><t>Q0Qq</t><t>xQ0Q</t><t>Q1Qqqqqqqqqqqqqqqqq</t>"),
            "<t>a</t><t>Q0Qq</t><t>xQ0Q</t><t>run 12 recipe=dense</t>");
}

}  // namespace
}  // namespace nmsparse::report

namespace nmsparse::report {
namespace {

// Issue 40: a configuration's band is a translucent fill under its mean line in its recipe's colour; the runs
// hidden behind it are not drawn in a static figure; points of a configuration carry their error bars.
TEST(GnuplotSvgTest, BandsInTheGroupsColourAndNoHiddenRuns) {
  Figure f{"curves_top1", "t", "", "epoch", "top1", false, {}};
  Series band{"SRSTE mean", Series::Style::kBand, {1, 2}, {0.5, 0.7}, {0.1, 0.05}};
  band.group = "SRSTE";
  Series other{"SRSTE 1:8 mean", Series::Style::kBand, {1, 2}, {0.4, 0.6}, {0.1, 0.05}};
  other.group = "SRSTE";
  Series hidden{"run 3", Series::Style::kLines, {1, 2}, {0.45, 0.65}, {}};
  hidden.group = "SRSTE";
  hidden.hidden = true;
  Series points{"configurations", Series::Style::kPoints, {1, 2}, {0.5, 0.7}, {0.1, 0.2}};
  f.series = {band, other, hidden, points};
  const std::string script = BuildGnuplotScript(f).text;
  EXPECT_NE(
      script.find("$d0 using 1:($2-$3):($2+$3) with filledcurves fs transparent solid 0.2 noborder lc 1"),
      std::string::npos)
      << script;
  EXPECT_NE(script.find("$d0 using 1:2 with lines linewidth 2 lc 1 dashtype 1"), std::string::npos) << script;
  EXPECT_NE(script.find("$d1 using 1:2 with lines linewidth 2 lc 1 dashtype 2"), std::string::npos) << script;
  EXPECT_EQ(script.find("$d2 using"), std::string::npos) << script;
  EXPECT_NE(script.find("$d3 using 1:2:3 with yerrorbars"), std::string::npos) << script;
  absl::StatusOr<std::string> svg = RenderSvg(f);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_EQ(svg->find("<title>run 3</title>"), std::string::npos);
  EXPECT_NE(svg->find("<title>SRSTE mean</title>"), std::string::npos);
}

}  // namespace
}  // namespace nmsparse::report
