// The browser side of the figures, one code path for the dashboard and the HTML report: plotly.js from
// Debian's python3-plotly (MIT; read at run time, never bundled) and nmsparse's report/web/figures.js
// (compiled in), and the page fragment that loads them and hands them the figures' JSON.
#ifndef NMSPARSE_REPORT_WEB_ASSETS_H_
#define NMSPARSE_REPORT_WEB_ASSETS_H_

#include <string>

#include "absl/status/statusor.h"

namespace nmsparse::report {

// Debian python3-plotly's plotly.js 2.6.3 (tools/bootstrap.sh).
inline constexpr char kPlotlyJsPath[] = "/usr/share/python3-plotly/plotly.js";

// plotly.js from `path`; an error naming the path and the package when it is missing.
absl::StatusOr<std::string> ReadPlotlyJs(const std::string& path = kPlotlyJsPath);

// report/web/figures.js.
const std::string& FiguresJs();

// "?v=" and a digest of figures.js and plotly.js's path: the dashboard's script URLs change with the scripts,
// so that browsers may cache them for long.
const std::string& AssetVersion();

// The end of a page that draws figures: the JSON (ScriptSafeJsonText of FiguresDocument) in
// <script id="nm-figures" type="application/json">, then plotly.js and figures.js from `script_base`
// ("" beside the page, "/static/" on the dashboard), their URLs ending with `query` (AssetVersion or "").
std::string FigureScripts(const std::string& script_safe_json, const std::string& script_base,
                          const std::string& query = "");

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_WEB_ASSETS_H_
