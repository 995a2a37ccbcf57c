// The sweep report: one index.html (a mustache template rendered with mstch) that names its SVG figures by
// relative path ("curves_loss.svg"), the figures themselves, and the recipe x N:M table with spread of
// `nmctl compare`. nmctl writes the files to a directory; the dashboard serves the same files under
// /sweeps/ID/report/, so the relative links work in both.
#ifndef NMSPARSE_REPORT_HTML_REPORT_H_
#define NMSPARSE_REPORT_HTML_REPORT_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

struct ReportFiles {
  std::map<std::string, std::string> files;  // File name ("index.html", "curves_loss.svg") -> content.
};

// Every file of the report of `data` on final `metric`. Errors name the sweep and the failing figure.
absl::StatusOr<ReportFiles> BuildReport(const SweepData& data, const std::string& metric);

// Only index.html (what the dashboard serves without drawing every figure).
std::string ReportHtml(const SweepData& data, const std::string& metric);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_HTML_REPORT_H_
