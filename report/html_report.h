// The sweep report: one index.html (a mustache template rendered with mstch) whose figures figures.js draws
// with plotly.js from the JSON inline in the page (report/web_assets.h; the dashboard draws with the same
// code), the static figures for papers (gnuplot SVG, and PDF from it with rsvg-convert), and the recipe x
// N:M table with spread of `nmctl compare`. nmctl writes the files to a directory; the dashboard serves the
// same page under /sweeps/ID/report/ (its scripts from /static/, the SVG files beside it).
#ifndef NMSPARSE_REPORT_HTML_REPORT_H_
#define NMSPARSE_REPORT_HTML_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/figure.h"
#include "report/sweep_data.h"
#include "report/web_assets.h"

namespace nmsparse::report {

struct ReportOptions {
  bool pdf = false;          // Also each figure as PDF (rsvg-convert; svg_pdf.h).
  std::string script_base;   // Where the page loads plotly.js and figures.js: "" beside it.
  std::string script_query;  // Their URLs' ending (web_assets.h: AssetVersion on the dashboard).
  std::string plotly_js_path = kPlotlyJsPath;
};

struct ReportFiles {
  std::map<std::string, std::string> files;  // File name ("index.html", "curves_loss.svg") -> content.
};

// Every file of the report of `data` on final `metric`: index.html, plotly.js (copied from
// options.plotly_js_path), figures.js, each figure's SVG (and PDF). Errors name the sweep and the failing
// figure, or the missing plotly.js or rsvg-convert.
absl::StatusOr<ReportFiles> BuildReport(const SweepData& data, const std::string& metric,
                                        const ReportOptions& options = {});

// Only index.html (what the dashboard serves without drawing every static figure).
std::string ReportHtml(const SweepData& data, const std::string& metric, const ReportOptions& options = {});
// The same with the figures SweepFigures(data, metric) already built (the dashboard builds them once).
std::string ReportHtml(const SweepData& data, const std::string& metric, const std::vector<Figure>& figures,
                       const ReportOptions& options = {});

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_HTML_REPORT_H_
