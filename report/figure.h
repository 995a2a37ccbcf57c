// A figure as data: named series of (x, y[, ±err]) points with axis titles. Built once (figures.h) and drawn
// by gnuplot as SVG for the report and the dashboard (gnuplot_svg.h); the dashboard's live charts read the
// same kind of series as JSON.
#ifndef NMSPARSE_REPORT_FIGURE_H_
#define NMSPARSE_REPORT_FIGURE_H_

#include <string>
#include <vector>

namespace nmsparse::report {

struct Series {
  enum class Style {
    kLines,      // A learning curve.
    kPoints,     // One point per run.
    kErrorBars,  // Mean with ± std bars, joined.
    kFront,      // The Pareto front: a step line over its points.
  };
  std::string name;
  Style style = Style::kLines;
  std::vector<double> x, y;
  std::vector<double> err;  // Empty, or one per point (kErrorBars).
};

struct Figure {
  std::string id;  // File stem and HTML anchor: "curves_loss" (report/file_name_part.h: never a path).
  std::string title;
  std::string caption;  // One sentence under it: what is plotted and how.
  std::string x_label, y_label;
  bool log_x = false;
  std::vector<Series> series;
};

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_FIGURE_H_
