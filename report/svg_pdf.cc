#include "report/svg_pdf.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "report/tool_run.h"

namespace nmsparse::report {

absl::StatusOr<std::string> SvgToPdf(const std::string& svg) {
  ToolRun run("rsvg");
  if (run.path().empty()) return absl::InternalError("cannot create a temporary directory for rsvg-convert");
  NM_RETURN_IF_ERROR(run.Write("figure.svg", svg));
  const int rc =
      run.Run("rsvg-convert", "NMSPARSE_RSVG_CONVERT", {"-f", "pdf", "-o", "figure.pdf", "figure.svg"});
  if (rc < 0) {
    return absl::FailedPreconditionError(
        "cannot run rsvg-convert: install Debian's librsvg2-bin (tools/bootstrap.sh) or set "
        "NMSPARSE_RSVG_CONVERT");
  }
  const std::string pdf = run.Read("figure.pdf");
  if (rc != 0 || pdf.rfind("%PDF", 0) != 0) {
    return absl::InternalError(
        absl::StrCat("rsvg-convert failed (exit ", rc, "): ", VisibleLines(run.Read("stderr"))));
  }
  return pdf;
}

}  // namespace nmsparse::report
