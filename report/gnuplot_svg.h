// Draws a Figure as SVG with gnuplot (Debian gnuplot-nox, its svg terminal): the data go inline in the
// script as named blocks, so nothing but the script and the SVG touch the disk (a private temporary
// directory, removed afterwards). Each series is one <g id="gnuplot_plot_K"><title>NAME</title> group of the
// SVG, which the tests read back.
#ifndef NMSPARSE_REPORT_GNUPLOT_SVG_H_
#define NMSPARSE_REPORT_GNUPLOT_SVG_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/figure.h"

namespace nmsparse::report {

// The gnuplot script that draws `figure` to `svg_path`.
std::string GnuplotScript(const Figure& figure, const std::string& svg_path);

// Runs `gnuplot` (found on PATH; $NMSPARSE_GNUPLOT overrides) on the script and returns the SVG text.
// FailedPrecondition when gnuplot cannot be run (naming the package), Internal with gnuplot's message when it
// fails.
absl::StatusOr<std::string> RenderSvg(const Figure& figure);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_GNUPLOT_SVG_H_
