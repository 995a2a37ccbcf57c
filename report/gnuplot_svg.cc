#include "report/gnuplot_svg.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "report/tool_run.h"

namespace nmsparse::report {
namespace {

constexpr char kScriptFile[] = "figure.gp";
constexpr char kSvgFile[] = "figure.svg";

// Our own text in a gnuplot script, single-quoted: only for the constant strings below, never user text.
std::string Quoted(const std::string& text) { return "'" + text + "'"; }

std::string DataBlock(const Series& s, size_t index) {
  std::string out = absl::StrCat("$d", index, " << EOD\n");
  for (size_t i = 0; i < s.x.size(); ++i) {
    if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
    absl::StrAppend(&out, absl::StrFormat("%.10g %.10g", s.x[i], s.y[i]));
    if (i < s.err.size())
      absl::StrAppend(&out, absl::StrFormat(" %.10g", std::isfinite(s.err[i]) ? s.err[i] : 0.0));
    out += "\n";
  }
  return out + "EOD\n";
}

// The line colour and dash of a series: series of one group (a recipe) share the group's colour (gnuplot's
// line type of the group's place) and take dashes in turn; a series without a group a colour of its own.
struct LineStyle {
  int color = 1;
  int dash = 1;
};

std::vector<LineStyle> LineStyles(const Figure& f) {
  std::vector<LineStyle> out;
  std::map<std::string, LineStyle> last;  // Per group: its colour and the dash its last series took.
  int colors = 0;
  for (const Series& s : f.series) {
    if (s.group.empty()) {
      out.push_back({++colors, 1});
      continue;
    }
    auto [it, added] = last.emplace(s.group, LineStyle{colors + 1, 0});
    if (added) ++colors;
    ++it->second.dash;
    out.push_back(it->second);
  }
  return out;
}

// `title` is a placeholder (svg_text_placeholders.h), never the series' name itself.
std::string PlotClause(const Series& s, size_t index, const std::string& title, LineStyle line) {
  const std::string data = absl::StrCat("$d", index);
  const std::string key = absl::StrCat(" title ", Quoted(title), " noenhanced");
  const std::string look = absl::StrFormat(" lc %d dashtype %d", line.color, line.dash);
  switch (s.style) {
    case Series::Style::kPoints:
      if (!s.err.empty()) return absl::StrCat(data, " using 1:2:3 with yerrorbars pointsize 1.3", look, key);
      return absl::StrCat(data, " using 1:2 with points pointsize 1.3", look, key);
    case Series::Style::kErrorBars:
      return absl::StrCat(data, " using 1:2:3 with yerrorlines", look, key);
    case Series::Style::kBand:
      // The ± std band, translucent, then the mean line over it.
      return absl::StrCat(data,
                          " using 1:($2-$3):($2+$3) with filledcurves fs transparent solid 0.2 noborder lc ",
                          line.color, " notitle, ", data, " using 1:2 with lines linewidth 2", look, key);
    case Series::Style::kFront:
      // The step line, and a ring on each member: a front of one run has no step to draw.
      return absl::StrCat(data, " using 1:2 with steps dashtype 2 linewidth 2 lc rgb \"black\"", key, ", ",
                          data, " using 1:2 with points pointtype 6 pointsize 2 lc rgb \"black\" notitle");
    case Series::Style::kBars:
      return absl::StrCat(data, " using 1:2 with boxes fill solid 0.6", key);
    default:
      // A curve of one point (a one-epoch run) is a marker, not a line too short to see.
      if (s.x.size() == 1) return absl::StrCat(data, " using 1:2 with points pointsize 1.3", look, key);
      return absl::StrCat(data, " using 1:2 with linespoints pointsize 0.5", look, key);
  }
}

// The x tics of a figure whose series name their points (bars, categorical slices): each distinct x at its
// label's placeholder. Empty when no series has labels.
std::string CategoryTics(const Figure& f, SvgTextPlaceholders* texts) {
  std::map<double, std::string> tics;
  for (const Series& s : f.series) {
    for (size_t i = 0; i < s.categories.size() && i < s.x.size(); ++i) {
      if (std::isfinite(s.x[i])) tics.emplace(s.x[i], s.categories[i]);
    }
  }
  if (tics.empty()) return "";
  std::string out = "set xtics rotate by -30 (";
  for (auto it = tics.begin(); it != tics.end(); ++it) {
    absl::StrAppend(&out, it == tics.begin() ? "" : ", ", Quoted(texts->Add(it->second)),
                    absl::StrFormat(" %.10g", it->first));
  }
  return out + ")\nset boxwidth 0.7\n";
}

// One row per run, one column per dimension (NaN where the run lacks the value; a log axis as log10), and
// each axis' tics: our decade numbers for a log axis, placeholders for a categorical one.
std::string ParallelScript(const Figure& f, SvgTextPlaceholders* texts) {
  const size_t dims = f.dimensions.size();
  size_t rows = 0;
  for (const Dimension& d : f.dimensions) rows = std::max(rows, d.values.size());
  std::string out = "$p << EOD\n";
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < dims; ++k) {
      const Dimension& d = f.dimensions[k];
      double v = r < d.values.size() ? d.values[r] : NAN;
      if (d.log) v = v > 0 ? std::log10(v) : NAN;
      absl::StrAppend(&out, k ? " " : "", std::isfinite(v) ? absl::StrFormat("%.10g", v) : "NaN");
    }
    out += "\n";
  }
  out += "EOD\nset xtics (";
  for (size_t k = 0; k < dims; ++k) {
    absl::StrAppend(&out, k ? ", " : "", Quoted(texts->Add(f.dimensions[k].label)), " ", k + 1);
  }
  absl::StrAppend(&out, ")\nset xrange [0.7:", dims + 0.3, "]\nunset ytics\nset border 0\nunset grid\n");
  for (size_t k = 0; k < dims; ++k) {
    const Dimension& d = f.dimensions[k];
    std::string tics;
    if (!d.categories.empty()) {
      for (size_t c = 0; c < d.categories.size(); ++c)
        absl::StrAppend(&tics, c ? ", " : "", Quoted(texts->Add(d.categories[c])), " ", c);
    } else if (!d.ticks.empty()) {
      for (size_t t = 0; t < d.ticks.size(); ++t) {
        const double at = d.log ? std::log10(d.ticks[t]) : d.ticks[t];
        if (std::isfinite(at))
          absl::StrAppend(&tics, tics.empty() ? "" : ", ", absl::StrFormat("'%.4g' %.10g", d.ticks[t], at));
      }
    } else if (d.log) {
      double low = INFINITY, high = -INFINITY;
      for (double v : d.values) {
        if (v > 0 && std::isfinite(v)) {
          low = std::min(low, std::floor(std::log10(v)));
          high = std::max(high, std::ceil(std::log10(v)));
        }
      }
      for (double e = low; e <= high; ++e) absl::StrAppend(&tics, e > low ? ", " : "", "'1e", e, "' ", e);
    }
    absl::StrAppend(&out, "set paxis ", k + 1, " tics", tics.empty() ? "" : " (" + tics + ")", "\n");
  }
  if (rows == 0 || dims == 0) return out + "plot [0:1][0:1] NaN notitle\n";
  // Lines coloured by the last axis (the objective).
  return absl::StrCat(out, "set palette rgb 33,13,10\nunset colorbox\nplot for [col=1:", dims,
                      "] $p using col:", dims, " with parallelaxes lc palette notitle\n");
}

// The x axis's scale and tics. Log: one label per decade, with nmctl's SI prefix (10G). Whole numbers over
// a short span (epochs): a tic per whole number. One x value only (a one-epoch sweep): a range around it.
std::string XAxis(const Figure& f) {
  double lo = INFINITY, hi = -INFINITY;
  bool whole = true;
  for (const Series& s : f.series) {
    for (double x : s.x) {
      if (!std::isfinite(x) || (f.log_x && x <= 0)) continue;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      whole = whole && x == std::floor(x);
    }
  }
  if (f.log_x) {
    // Tics from a power of ten (the range's margins would otherwise start them off a decade).
    const double first = std::isfinite(lo) ? std::pow(10.0, std::floor(std::log10(lo))) : 1.0;
    std::string out = absl::StrFormat(
        "set logscale x 10\nset xtics %.0e, 10\nset mxtics 10\nset format x \"%%.0s%%c\"\n", first);
    if (lo == hi) absl::StrAppend(&out, absl::StrFormat("set xrange [%.10g:%.10g]\n", lo / 10, hi * 10));
    return out;
  }
  if (!(lo <= hi)) return "";
  if (lo == hi && whole) return absl::StrFormat("set xrange [%.10g:%.10g]\nset xtics 1\n", lo - 1, hi + 1);
  if (lo == hi) {
    const double margin = lo != 0 ? std::fabs(lo) / 2 : 1;
    return absl::StrFormat("set xrange [%.10g:%.10g]\n", lo - margin, hi + margin);
  }
  if (whole && hi - lo <= 20) return "set xtics 1\n";
  return "";
}

}  // namespace

GnuplotScript BuildGnuplotScript(const Figure& f) {
  GnuplotScript out;
  std::string& script = out.text;
  SvgTextPlaceholders& texts = out.texts;
  script = absl::StrCat(
      "set terminal svg size 760,480 dynamic enhanced font \"sans,11\" background rgb \"white\"\n",
      "set output ", Quoted(kSvgFile), "\n", "set title ", Quoted(texts.Add(f.title)), " noenhanced\n",
      "set xlabel ", Quoted(texts.Add(f.x_label)), " noenhanced\n", "set ylabel ",
      Quoted(texts.Add(f.y_label)), " noenhanced\n",
      "set grid\nset key outside below\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n");
  if (f.kind == Figure::Kind::kParallelCoordinates) {
    script += ParallelScript(f, &texts);
    return out;
  }
  script += XAxis(f);
  script += CategoryTics(f, &texts);  // After XAxis: a categorical axis's labels replace its number tics.
  bool any_point = false;
  for (size_t i = 0; i < f.series.size(); ++i) {
    script += DataBlock(f.series[i], i);
    any_point = any_point || (!f.series[i].x.empty() && !f.series[i].hidden);
  }
  if (!any_point) {
    // gnuplot refuses to plot nothing: an empty frame that says why.
    script +=
        "unset logscale x\nset xtics autofreq\nset format x\nset label \"no data yet\" at graph 0.5, graph "
        "0.5 center\n"
        "plot [0:1][0:1] NaN notitle\n";
    return out;
  }
  script += "plot ";
  bool first = true;
  const std::vector<LineStyle> styles = LineStyles(f);
  for (size_t i = 0; i < f.series.size(); ++i) {
    // A hidden series (a run behind its configuration's band) is for the interactive figures only.
    if (f.series[i].x.empty() || f.series[i].hidden) continue;
    absl::StrAppend(&script, first ? "" : ", \\\n     ",
                    PlotClause(f.series[i], i, texts.Add(f.series[i].name), styles[i]));
    first = false;
  }
  script += "\n";
  return out;
}

absl::StatusOr<std::string> RenderSvg(const Figure& figure) {
  ToolRun run("gnuplot");
  if (run.path().empty()) return absl::InternalError("cannot create a temporary directory for gnuplot");
  const GnuplotScript script = BuildGnuplotScript(figure);
  NM_RETURN_IF_ERROR(run.Write(kScriptFile, script.text));
  // The script names no path: gnuplot writes figure.svg in its private folder.
  const int rc = run.Run("gnuplot", "NMSPARSE_GNUPLOT", {kScriptFile});
  if (rc < 0) {
    return absl::FailedPreconditionError(
        "cannot run gnuplot: install Debian's gnuplot-nox (tools/bootstrap.sh) or set NMSPARSE_GNUPLOT");
  }
  const std::string svg = run.Read(kSvgFile);
  if (rc != 0 || svg.find("</svg>") == std::string::npos) {
    return absl::InternalError(absl::StrCat("gnuplot failed on figure ", figure.id, " (exit ", rc,
                                            "): ", VisibleLines(run.Read("stderr"))));
  }
  return script.texts.Substitute(svg);
}

}  // namespace nmsparse::report
