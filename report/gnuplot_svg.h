// Draws a Figure as SVG with gnuplot (Debian gnuplot-nox, its svg terminal): the data go inline in the
// script as named blocks of numbers, so nothing but the script and the SVG touch the disk (a private
// temporary directory, removed afterwards). No text of the figure enters the script: titles, axis labels and
// legend entries are placeholders there, replaced in the SVG once gnuplot has written it
// (svg_text_placeholders.h). Each series is one <g id="gnuplot_plot_K"><title>NAME</title> group of the SVG,
// which the tests read back.
#ifndef NMSPARSE_REPORT_GNUPLOT_SVG_H_
#define NMSPARSE_REPORT_GNUPLOT_SVG_H_

#include <string>

#include "absl/status/statusor.h"
#include "report/figure.h"
#include "report/svg_text_placeholders.h"

namespace nmsparse::report {

struct GnuplotScript {
  std::string text;           // Draws to figure.svg in gnuplot's working directory.
  SvgTextPlaceholders texts;  // The figure's texts, which `text` names only by placeholder.
};

GnuplotScript BuildGnuplotScript(const Figure& figure);

// Runs `gnuplot` (found on PATH; $NMSPARSE_GNUPLOT overrides) on the script and returns the SVG text with
// the figure's texts in place. FailedPrecondition when gnuplot cannot be run (naming the package), Internal
// with gnuplot's message when it fails.
absl::StatusOr<std::string> RenderSvg(const Figure& figure);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_GNUPLOT_SVG_H_
