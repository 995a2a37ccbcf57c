// A figure as data: named series of (x, y[, ±err]) points with axis titles, or parallel coordinates (one line
// per run across parameter axes). Built once (figures.h, search_views.h) and drawn by every renderer: gnuplot
// as static SVG for papers (gnuplot_svg.h), and the browser's interactive charts of the dashboard and the
// HTML report, which read the same figure as JSON.
#ifndef NMSPARSE_REPORT_FIGURE_H_
#define NMSPARSE_REPORT_FIGURE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace nmsparse::report {

struct Series {
  enum class Style {
    kLines,      // A learning curve.
    kPoints,     // One point per run.
    kErrorBars,  // Mean with ± std bars, joined.
    kFront,      // The Pareto front: a step line over its points.
    kBars,       // One bar per point: x is the bar's index, `categories` its labels (importances).
    kBand,       // A mean line with a shaded ± std band around it (replicates over seeds).
  };
  std::string name;
  Style style = Style::kLines;
  std::vector<double> x, y;
  std::vector<double> err;            // Empty, or one per point (kErrorBars).
  std::vector<int64_t> run_ids = {};  // Empty, or the run of each point (hover, selection across figures).
  // Empty, or one label per point, its x naming a category: the bars (kBars), or a slice over a categorical
  // parameter (kPoints); renderers label the x axis with them.
  std::vector<std::string> categories = {};
  // Series of one group (a recipe) share a colour, each with its own dash; empty: a colour of its own.
  std::string group = {};
  // Drawn only on request: the interactive figures list it in the legend, hidden, with the others of its
  // `legend_group` under one entry (a configuration's runs behind its band); static figures leave it out.
  bool hidden = false;
  std::string legend_group = {};
};

// One axis of a parallel-coordinates figure: a value per run (NaN where the run lacks it); a categorical
// parameter's values index `categories`.
struct Dimension {
  std::string label;
  bool log = false;
  std::vector<double> values;
  std::vector<std::string> categories;
  std::vector<double> ticks = {};  // Non-empty: the only values a discrete numeric axis takes, each a tick.
};

struct Figure {
  std::string id;  // File stem and HTML anchor: "curves_loss" (report/file_name_part.h: never a path).
  std::string title;
  std::string caption;  // One sentence under it: what is plotted and how.
  std::string x_label, y_label;
  bool log_x = false;
  std::vector<Series> series;  // kXY.

  enum class Kind { kXY, kParallelCoordinates };
  Kind kind = Kind::kXY;
  // kParallelCoordinates: the parameters' axes, the objective last; `run_ids` names each line.
  std::vector<Dimension> dimensions = {};
  std::vector<int64_t> run_ids = {};
};

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_FIGURE_H_
