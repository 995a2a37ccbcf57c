// A static figure for papers as PDF: the gnuplot SVG (its texts already substituted, svg_text_placeholders.h)
// converted by rsvg-convert (Debian librsvg2-bin), so the PDF shows exactly the SVG's text.
#ifndef NMSPARSE_REPORT_SVG_PDF_H_
#define NMSPARSE_REPORT_SVG_PDF_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse::report {

// The PDF of `svg`. FailedPrecondition naming the package when rsvg-convert cannot be run
// ($NMSPARSE_RSVG_CONVERT overrides the program), Internal with its message when it fails.
absl::StatusOr<std::string> SvgToPdf(const std::string& svg);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_SVG_PDF_H_
