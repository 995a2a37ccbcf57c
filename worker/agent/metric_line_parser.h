// Turns rank 0's stdout lines into metric points. nmtrain prints one flat JSON object per line:
//   {"kind":"epoch"|"step"|"final","epoch":E,"step":S, <name>: number | string, ...}
// Numbers become MetricPoint.values, strings MetricPoint.labels. Any other line is a log line.
#ifndef NMSPARSE_WORKER_AGENT_METRIC_LINE_PARSER_H_
#define NMSPARSE_WORKER_AGENT_METRIC_LINE_PARSER_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "nmsparse/v1/sweep.pb.h"

namespace nmsparse::agent {

struct ParsedMetricLine {
  v1::MetricPoint point;  // run_id, attempt, seq and at_ms are left for the caller.
  bool is_final = false;  // kind "final": its values are also the run's final metrics.
};

// The metric carried by `line`, or nullopt when the line is not a metric line (not a JSON object, no known
// kind, or epoch/step that are not non-negative integers); such lines are logged instead.
std::optional<ParsedMetricLine> ParseMetricLine(absl::string_view line);

}  // namespace nmsparse::agent

#endif  // NMSPARSE_WORKER_AGENT_METRIC_LINE_PARSER_H_
