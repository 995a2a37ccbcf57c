// The sweep page's run table, served a page at a time (GET /api/sweeps/S/runs): each run is formatted once
// into a row when its sweep's snapshot is taken (sweep_cache.h), then filtered, sorted and cut to a page on
// the server, so a sweep of 50k runs costs the browser one page. Each final metric is a column of the table,
// its cells in nmctl's number format (common/metric_text.h), formatted here once for the page's first render
// and its polls alike.
#ifndef NMSPARSE_SERVER_DASHBOARD_RUN_ROWS_H_
#define NMSPARSE_SERVER_DASHBOARD_RUN_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/proto_json.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::server {

struct RunRow {
  int64_t id = 0;
  std::string labels;  // "nm=2:4 recipe=dense": sorted by axis.
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  uint32_t attempt = 0;
  std::map<std::string, double> finals;
  std::map<std::string, std::string> final_texts;  // FormatMetric of each final (1e12: "1T").
};

RunRow RowOf(const v1::Run& run);

// The final metrics that get a column, by name: every name some row of the sweep has, up to
// kMaxFinalColumns (a trainer that writes hundreds of finals still gives a table one can read).
inline constexpr size_t kMaxFinalColumns = 32;
std::vector<std::string> FinalColumns(const std::vector<RunRow>& rows);

// What a page of the table asks for: ?offset=&limit=&state=&q=&sort=&desc=1.
struct RunsQuery {
  int64_t offset = 0;
  int64_t limit = 100;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;  // Unspecified: every state.
  std::string q;                                   // A substring of the labels (or the id); empty: all.
  std::string sort = "id";                         // id, state, attempt, labels, or a final metric's name.
  bool desc = false;
};

// From a request's query parameters. InvalidArgument naming the parameter, its value and its bound
// (limits::kMaxDashboardPageRuns, kMaxDashboardFilterBytes) for anything out of them.
absl::StatusOr<RunsQuery> ParseRunsQuery(const std::multimap<std::string, std::string>& params);

// The query as one canonical line (a cache key).
std::string QueryText(const RunsQuery& query);

// {"total", "matched", "offset", "limit", "sort", "desc", "metrics": FinalColumns, "runs": [{"id", "labels",
// "state", "attempt", "finals": {name: number}, "final_texts": {name: text}}]}: the rows that pass the
// filter, sorted (numbers as numbers, ties by id; runs lacking the sorted-by metric, or whose value is NaN,
// last in either direction), from `offset`.
Json RunsPage(const std::vector<RunRow>& rows, const RunsQuery& query);

Json RowJson(const RunRow& row);

}  // namespace nmsparse::server

#endif  // NMSPARSE_SERVER_DASHBOARD_RUN_ROWS_H_
