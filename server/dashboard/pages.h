// The dashboard's HTML pages (mustache templates rendered by report/html_page.h: every {{value}} is visible
// text, HTML-escaped). The
// pages are rendered with the data of the moment and then keep themselves current by polling the JSON
// endpoints (docs/dashboard.md). Figures are drawn in the browser by report/web/figures.js with plotly.js,
// the same code as the HTML report's.
#ifndef NMSPARSE_SERVER_DASHBOARD_PAGES_H_
#define NMSPARSE_SERVER_DASHBOARD_PAGES_H_

#include <string>
#include <vector>

#include "common/proto_json.h"
#include "report/figure.h"
#include "report/sweep_data.h"

namespace nmsparse::server {

// `sweeps`: the JSON of ListSweeps.
std::string SweepsPage(const Json& sweeps);
// `summary`: {"sweep", "version", "ended", "total"} as GET /api/sweeps/S answers; `page`: the table's first
// page as GET /api/sweeps/S/runs answers (run_table.h). The page then reads its figures from
// GET /api/sweeps/S/figures and draws them with report/web/figures.js.
std::string SweepPage(const Json& summary, const Json& page);
// `run`: the JSON of GetRun.
std::string RunPage(const Json& run);
std::string LoginPage(const std::string& message);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_PAGES_H_
