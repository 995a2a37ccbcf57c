#include "server/dashboard/run_rows.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/metric_text.h"
#include "common/status_macros.h"
#include "common/visible_text.h"
#include "report/compare_pivot.h"
#include "schemas/limits.h"

namespace nmsparse::server {
namespace {

absl::StatusOr<int64_t> IntParam(const std::string& name, const std::string& text, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": '", VisibleText(text, 32), "' is not a number in [", min, ", ", max, "]"));
  }
  return value;
}

bool Matches(const RunRow& row, const RunsQuery& query) {
  if (query.state != v1::RUN_STATE_UNSPECIFIED && row.state != query.state) return false;
  return query.q.empty() || row.labels.find(query.q) != std::string::npos ||
         std::to_string(row.id) == query.q;
}

// Strict weak order of `sort` ascending; ties and missing metrics are settled by the caller.
bool Less(const RunRow& a, const RunRow& b, const std::string& sort) {
  if (sort == "state") return v1::RunState_Name(a.state) < v1::RunState_Name(b.state);
  if (sort == "attempt") return a.attempt < b.attempt;
  if (sort == "labels") return a.labels < b.labels;
  return a.finals.at(sort) < b.finals.at(sort);  // Both present and not NaN (the caller's HasValue).
}

// Whether the row has a number to sort by: NaN has no order, so it goes last with the missing.
bool HasValue(const RunRow& row, const std::string& metric) {
  auto it = row.finals.find(metric);
  return it != row.finals.end() && !std::isnan(it->second);
}

bool IsColumn(const std::string& sort) {
  return sort == "id" || sort == "state" || sort == "attempt" || sort == "labels";
}

}  // namespace

std::vector<std::string> FinalColumns(const std::vector<RunRow>& rows) {
  std::set<std::string> names;
  for (const RunRow& row : rows) {
    for (const auto& [name, value] : row.finals) names.insert(name);
  }
  std::vector<std::string> out(names.begin(), names.end());
  if (out.size() > kMaxFinalColumns) out.resize(kMaxFinalColumns);
  return out;
}

RunRow RowOf(const v1::Run& run) {
  RunRow row;
  row.id = run.id();
  // As nmctl shows them: in axis order, a random draw in nmctl's number format.
  std::vector<std::string> parts;
  for (const auto& [axis, value] : report::OrderedLabels(run)) {
    parts.push_back(absl::StrCat(axis, "=", FormatLabelValue(value)));
  }
  row.labels = absl::StrJoin(parts, " ");
  row.state = run.state();
  row.attempt = run.attempt();
  row.finals.insert(run.final_metrics().begin(), run.final_metrics().end());
  for (const auto& [name, value] : row.finals) row.final_texts[name] = FormatMetric(value);
  return row;
}

absl::StatusOr<RunsQuery> ParseRunsQuery(const std::multimap<std::string, std::string>& params) {
  RunsQuery query;
  for (const auto& [name, value] : params) {
    if (name == "offset") {
      NM_ASSIGN_OR_RETURN(int64_t offset, IntParam(name, value, 0, limits::kDefaultMaxRunsPerSweep));
      query.offset = offset;
    } else if (name == "limit") {
      NM_ASSIGN_OR_RETURN(int64_t limit, IntParam(name, value, 1, limits::kMaxDashboardPageRuns));
      query.limit = limit;
    } else if (name == "state") {
      if (!value.empty() && !v1::RunState_Parse(value, &query.state)) {
        return absl::InvalidArgumentError(
            absl::StrCat("state: '", VisibleText(value, 32), "' is not a run state"));
      }
    } else if (name == "q") {
      if (static_cast<int64_t>(value.size()) > limits::kMaxDashboardFilterBytes) {
        return absl::InvalidArgumentError(absl::StrCat("q: ", value.size(), " bytes, more than the limit of ",
                                                       limits::kMaxDashboardFilterBytes));
      }
      query.q = value;
    } else if (name == "sort") {
      if (value.empty() || static_cast<int64_t>(value.size()) > limits::kMaxNameBytes) {
        return absl::InvalidArgumentError(
            "sort: a column (id, state, attempt, labels) or a final metric name");
      }
      query.sort = value;
    } else if (name == "desc") {
      query.desc = value == "1" || value == "true";
    }
  }
  return query;
}

std::string QueryText(const RunsQuery& query) {
  return absl::StrCat(query.offset, "|", query.limit, "|", query.state, "|", query.sort, "|", query.desc, "|",
                      query.q);
}

Json RowJson(const RunRow& row) {
  return Json{{"id", row.id},
              {"labels", row.labels},
              {"state", v1::RunState_Name(row.state)},
              {"attempt", row.attempt},
              {"finals", row.finals},  // NaN and infinities are null in JSON: their text says which.
              {"final_texts", row.final_texts}};
}

Json RunsPage(const std::vector<RunRow>& rows, const RunsQuery& query) {
  std::vector<const RunRow*> matched;
  for (const RunRow& row : rows) {
    if (Matches(row, query)) matched.push_back(&row);
  }
  const std::string& sort = query.sort;
  const bool column = IsColumn(sort);
  std::stable_sort(matched.begin(), matched.end(), [&](const RunRow* a, const RunRow* b) {
    if (!column) {  // Runs without the metric go last, whichever the direction.
      const bool has_a = HasValue(*a, sort), has_b = HasValue(*b, sort);
      if (has_a != has_b) return has_a;
      if (!has_a) return a->id < b->id;
    }
    if (sort != "id") {
      if (Less(*a, *b, sort)) return !query.desc;
      if (Less(*b, *a, sort)) return query.desc;
    }
    return query.desc && sort == "id" ? a->id > b->id : a->id < b->id;
  });
  Json page = Json::array();
  for (int64_t i = query.offset; i < static_cast<int64_t>(matched.size()) && i < query.offset + query.limit;
       ++i) {
    page.push_back(RowJson(*matched[i]));
  }
  return Json{{"total", rows.size()},
              {"matched", matched.size()},
              {"offset", query.offset},
              {"limit", query.limit},
              {"sort", query.sort},
              {"desc", query.desc},
              {"metrics", FinalColumns(rows)},
              {"runs", page}};
}

}  // namespace nmsparse::server
