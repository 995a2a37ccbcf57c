// Figures as JSON for the browser (report/web/figures.js draws them with plotly.js, on the dashboard and in
// the HTML report alike): a neutral description of each figure (kind, id, titles, axes, log flags, series
// with style, points, error bars, run ids, categories, parallel-coordinates dimensions) and the runs it names
// (name and state, so that the page can label points and mark runs that early stopping ended). Every text is
// data: shown in common/visible_text.h's form (no control character, no bidi override), never as markup.
#ifndef NMSPARSE_REPORT_FIGURE_JSON_H_
#define NMSPARSE_REPORT_FIGURE_JSON_H_

#include <string>
#include <vector>

#include "common/proto_json.h"
#include "report/figure.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

// One figure; NaN and infinite values are null.
Json FigureJson(const Figure& figure);

// {"figures": [FigureJson...], "runs": {"<id>": {"name": ..., "state": "STOPPED_EARLY"}}}.
Json FiguresDocument(const std::vector<Figure>& figures, const SweepData& data);

// JSON text that can stand inside <script type="application/json">: one line, valid UTF-8, display controls,
// U+2028/U+2029 and '<', '>', '&' as \uXXXX escapes, so that no string can close the element ("</script>")
// or open a comment.
std::string ScriptSafeJsonText(const Json& json);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_FIGURE_JSON_H_
