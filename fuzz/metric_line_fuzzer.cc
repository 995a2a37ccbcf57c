// Fuzzes the agent's parser of the trainer's stdout lines: any bytes are either a metric point or a log line,
// and a metric point has the kind it was given.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz/fuzz_check.h"
#include "worker/agent/metric_line_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  const std::optional<nmsparse::agent::ParsedMetricLine> metric = nmsparse::agent::ParseMetricLine(line);
  if (metric) FUZZ_CHECK(metric->is_final == (metric->point.kind() == "final"), metric->point.DebugString());
  return 0;
}
